using Nats.Storage.File;
using Xunit.Abstractions;

namespace Nats.Storage.Tests;

/// <summary>
/// Damages block files the ways disks and crashes do (truncation, zeroed tail pages as a torn write
/// leaves them, flipped bytes in the newest and older blocks), then checks the store: every message is
/// either served intact or reported lost, damage is logged and counted, no sequence is reused, and
/// messages stored after the damage are served, also after another restart.
/// </summary>
public sealed class CorruptionTests(ITestOutputHelper output)
{
    private const int Messages = 1500;

    // NATS_STORAGE_CORRUPTION_SEEDS widens the sweep for a soak run.
    private static readonly int Seeds =
        int.TryParse(Environment.GetEnvironmentVariable("NATS_STORAGE_CORRUPTION_SEEDS"), out var n) ? n : 4;
    private const int BlockSize = 8 * 1024;

    public static TheoryData<string, bool, int> Cases()
    {
        var data = new TheoryData<string, bool, int>();
        foreach (var kind in new[] { "truncate-newest", "zero-tail-newest", "flip-newest", "flip-older", "flip-everywhere", "truncate-older", "cut-older-at-record" })
        {
            foreach (var crashed in new[] { false, true })
            {
                for (var seed = 1; seed <= Seeds; seed++)
                {
                    data.Add(kind, crashed, seed);
                }
            }
        }
        return data;
    }

    [Theory, MemberData(nameof(Cases))]
    public void DamageIsReportedAndNeverPoisonsTheFuture(string damage, bool crashed, int seed)
    {
        using var dir = new TempDir();
        var rng = new Random(seed * 7919 + damage.Sum(c => c) + (crashed ? 1 : 0));
        var payloads = new Dictionary<ulong, byte[]>();
        // Small index chunks that are evicted and rebuilt, so damage also meets index pages rebuilt from disk.
        // Seeds 1 and 4 write per-message block indexes, 2 and 3 only seal summaries (the default): a block cut
        // exactly at a record boundary scans clean, and only what was recorded at its seal tells.
        var options = new FileStoreOptions
        {
            Directory = dir.Path,
            BlockSize = BlockSize,
            IndexPageShift = 4,
            MaxIndexBytes = seed % 2 == 0 ? 1 : 8 << 20,
            BlockIndexes = seed % 4 < 2,
        };
        var store = StreamStores.OpenFile(new StoreConfig(), options);
        for (var i = 0; i < Messages; i++)
        {
            var data = new byte[rng.Next(1, 120)];
            rng.NextBytes(data);
            payloads[store.StoreMsg($"d.{i % 13}", default, data).Seq] = data;
        }
        store.Stop();

        var blocks = Directory.GetFiles(Path.Combine(dir.Path, "msgs"), "*.blk").OrderBy(p => p).ToArray();
        Assert.True(blocks.Length > 4);
        if (crashed)
        {
            // As after a crash: the newest block was never sealed and the stop was not clean.
            System.IO.File.Delete(Path.ChangeExtension(blocks[^1], ".idx"));
            var meta = Path.Combine(dir.Path, "meta.dat");
            var m = System.IO.File.ReadAllBytes(meta);
            m[20] = 0; // clean flag; the checksum now fails, which the store must also survive
            System.IO.File.WriteAllBytes(meta, m);
        }
        Damage(damage, blocks, rng, crashed);

        var warnings = new List<string>();
        options = options with { Warn = warnings.Add };
        store = StreamStores.OpenFile(new StoreConfig(), options);
        var unreadable = new List<ulong>();
        var sm = new StoredMessage();
        foreach (var (seq, data) in payloads)
        {
            var msg = store.LoadMsg(seq, sm);
            if (msg is null)
            {
                unreadable.Add(seq);
                continue;
            }
            Assert.True(msg.Data.Span.SequenceEqual(data), $"message {seq} came back with different bytes");
        }
        var state = store.State();
        output.WriteLine($"unreadable {unreadable.Count}, lost {state.Lost?.Count} ({state.Lost?.Sequences.Count} known), last {state.LastSeq}");
        foreach (var w in warnings)
        {
            output.WriteLine(w);
        }

        Assert.True(unreadable.Count > 0 || damage.StartsWith("flip", StringComparison.Ordinal),
            "the damage should have cost at least one message");
        if (unreadable.Count > 0)
        {
            Assert.NotNull(state.Lost);
            Assert.NotEmpty(warnings);
            Assert.All(state.Lost.Sequences, s => Assert.Contains(s, unreadable));
        }

        // New messages get fresh sequences and are served, now and after another restart.
        var fresh = new List<ulong>();
        for (var i = 0; i < 50; i++)
        {
            var seq = store.StoreMsg("after", default, BitConverter.GetBytes(i)).Seq;
            Assert.True(seq > Messages, $"sequence {seq} reused after damage");
            fresh.Add(seq);
        }
        foreach (var seq in fresh)
        {
            Assert.NotNull(store.LoadMsg(seq));
        }

        store.Stop();

        // Without per-message block indexes, a message whose damaged record no longer says which it is
        // cannot be named when its index page is rebuilt: it stays counted, and the next open (a full
        // replay, no state file was written) reports it. With indexes that never happens.
        var unnamed = warnings.Any(w => w.Contains("were not found in their blocks", StringComparison.Ordinal));
        Assert.False(unnamed && options.BlockIndexes, "a per-message index names every message");
        warnings.Clear();
        store = StreamStores.OpenFile(new StoreConfig(), options);
        if (unnamed)
        {
            var lost = store.State().Lost;
            Assert.NotNull(lost);
            Assert.All(lost.Sequences, s => Assert.Contains(s, unreadable));
            Assert.NotEmpty(warnings);
            store.Stop();
            warnings.Clear();
            store = StreamStores.OpenFile(new StoreConfig(), options);
        }
        foreach (var (i, seq) in fresh.Index())
        {
            Assert.Equal(BitConverter.GetBytes(i), store.LoadMsg(seq)!.Data.ToArray());
        }

        foreach (var seq in payloads.Keys.Except(unreadable))
        {
            Assert.NotNull(store.LoadMsg(seq));
        }

        Assert.Null(store.State().Lost); // damage was repaired or tombstoned, not reported again
        Assert.Empty(warnings);
        Assert.True(store.StoreMsg("later", default, [1]).Seq > fresh[^1]);
        store.Stop();
    }

    private static void Damage(string damage, string[] blocks, Random rng, bool crashed)
    {
        switch (damage)
        {
            case "truncate-newest":
                // After a crash, a newest block that ends exactly on a record boundary looks the same
                // as one whose last writes never happened; nothing can tell them apart (see
                // docs/STORAGE.md), so the crash variant cuts inside a record, as a torn write does.
                Truncate(blocks[^1], rng, insideRecord: crashed);
                break;
            case "truncate-older":
                Truncate(blocks[rng.Next(blocks.Length - 1)], rng, insideRecord: false);
                break;
            case "cut-older-at-record":
                // Scans clean: only the index or seal summary written when the block was sealed tells.
                Truncate(blocks[rng.Next(blocks.Length - 1)], rng, insideRecord: false, atBoundary: true);
                break;
            case "zero-tail-newest":
                {
                    var bytes = System.IO.File.ReadAllBytes(blocks[^1]);
                    var zero = Math.Min(bytes.Length - 1, rng.Next(1, 4) * 1024 + rng.Next(0, 512));
                    Array.Clear(bytes, bytes.Length - zero, zero);
                    System.IO.File.WriteAllBytes(blocks[^1], bytes);
                    break;
                }
            case "flip-newest":
                Flip(blocks[^1], rng, 3);
                break;
            case "flip-older":
                Flip(blocks[rng.Next(blocks.Length - 1)], rng, 3);
                break;
            default:
                foreach (var b in blocks)
                {
                    Flip(b, rng, 2);
                }

                break;
        }
    }

    private static void Truncate(string path, Random rng, bool insideRecord, bool atBoundary = false)
    {
        var bytes = System.IO.File.ReadAllBytes(path);
        var boundaries = new HashSet<long>();
        for (var off = 0; off < bytes.Length; off += BitConverter.ToInt32(bytes, off))
        {
            boundaries.Add(off);
        }

        long cut;
        do
        {
            cut = rng.NextInt64(1, bytes.Length - 1);
        }
        while ((insideRecord && boundaries.Contains(cut)) || (atBoundary && !boundaries.Contains(cut)));
        using var f = new FileStream(path, FileMode.Open);
        f.SetLength(cut);
    }

    private static void Flip(string path, Random rng, int count)
    {
        var bytes = System.IO.File.ReadAllBytes(path);
        for (var i = 0; i < count; i++)
        {
            bytes[rng.Next(bytes.Length)] ^= (byte)rng.Next(1, 256);
        }

        System.IO.File.WriteAllBytes(path, bytes);
    }
}
