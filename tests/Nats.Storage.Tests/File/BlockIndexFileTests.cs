using System.Buffers.Binary;
using Nats.Storage.File;
using Nats.Storage.IO;
using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests;

/// <summary>Block index files: the compact version 2 lists exactly what the block holds, and version 1
/// files written by earlier builds are still read.</summary>
public sealed class BlockIndexFileTests
{
    private static (CrashFileSystem Fs, byte[] Block) BlockWithEveryKindOfRecord()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 1 << 20));
        for (var i = 0; i < 3000; i++)
        {
            var header = i % 7 == 0 ? "NATS/1.0\r\nA: b\r\n\r\n"u8.ToArray() : [];
            store.StoreMsg($"idx.{i % 37}.x", header, new byte[i % 200], ttl: i % 11 == 0 ? 3600 : 0);
        }
        for (ulong s = 5; s < 3000; s += 9)
        {
            store.RemoveMsg(s);
        }
        store.SkipMsg();
        store.Stop();
        using var file = fs.Open(CrashStores.BlockPath(1), StoreFileMode.Open);
        return (fs, file.ReadAll());
    }

    private static List<(int Offset, RecordHeader Rec, string Subject)> Entries(byte[] index)
    {
        var list = new List<(int, RecordHeader, string)>();
        var reader = new BlockIndexFile.Reader(index);
        while (reader.Next(out var offset, out var rec, out var subject))
        {
            list.Add((offset, rec, System.Text.Encoding.UTF8.GetString(subject)));
        }
        return list;
    }

    private static List<(int Offset, RecordHeader Rec, string Subject)> Records(byte[] block)
    {
        var list = new List<(int, RecordHeader, string)>();
        for (var off = 0; off < block.Length;)
        {
            Assert.True(RecordCodec.TryRead(block.AsSpan(off), out var rec));
            list.Add((off, rec, System.Text.Encoding.UTF8.GetString(block.AsSpan(off + rec.SubjectOffset, rec.SubjectLength))));
            off += rec.Length;
        }
        return list;
    }

    /// <summary>The version 1 layout, as earlier builds wrote it.</summary>
    private static byte[] Version1(byte[] block)
    {
        var records = Records(block);
        var size = 16 + records.Sum(r => 40 + r.Rec.SubjectLength) + 4;
        var buf = new byte[size];
        BinaryPrimitives.WriteUInt32LittleEndian(buf, 0x5844494E);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(4), 1);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(8), block.Length);
        BinaryPrimitives.WriteInt32LittleEndian(buf.AsSpan(12), records.Count);
        var pos = 16;
        foreach (var (offset, rec, subject) in records)
        {
            var e = buf.AsSpan(pos);
            BinaryPrimitives.WriteInt32LittleEndian(e, offset);
            BinaryPrimitives.WriteInt32LittleEndian(e[4..], rec.Length);
            e[8] = (byte)rec.Kind;
            e[9] = rec.Compact ? (byte)1 : (byte)0;
            BinaryPrimitives.WriteUInt16LittleEndian(e[10..], (ushort)rec.SubjectLength);
            BinaryPrimitives.WriteInt32LittleEndian(e[12..], rec.HeaderLength);
            BinaryPrimitives.WriteUInt64LittleEndian(e[16..], rec.Seq);
            BinaryPrimitives.WriteInt64LittleEndian(e[24..], rec.Timestamp);
            BinaryPrimitives.WriteInt64LittleEndian(e[32..], rec.TtlExpiry);
            System.Text.Encoding.UTF8.GetBytes(subject).CopyTo(e[40..]);
            pos += 40 + rec.SubjectLength;
        }
        BinaryPrimitives.WriteUInt32LittleEndian(buf.AsSpan(pos), Crc32C.Compute(buf.AsSpan(0, pos)));
        return buf;
    }

    [Fact]
    public void BothVersionsListExactlyTheBlocksRecords()
    {
        var (fs, block) = BlockWithEveryKindOfRecord();
        var expected = Records(block);
        Assert.Contains(expected, r => r.Rec.Kind == RecordKind.Tombstone);
        Assert.Contains(expected, r => r.Rec.TtlExpiry != 0 && r.Rec.HeaderLength > 0);

        fs.CreateDirectory("/crash/v2");
        BlockIndexFile.Write(fs, "/crash/v2/0000000001.blk", block, block.Length);
        var v2 = BlockIndexFile.TryLoad(fs, "/crash/v2/0000000001.blk", block.Length)!;
        Assert.Equal(expected, Entries(v2));

        var v1 = Version1(block);
        fs.CreateDirectory("/crash/v1");
        using (var f = fs.Open("/crash/v1/0000000001.idx", StoreFileMode.Create))
        {
            f.Write(v1, 0);
        }
        Assert.Equal(expected, Entries(BlockIndexFile.TryLoad(fs, "/crash/v1/0000000001.blk", block.Length)!));
        // Messages beyond a cut are found in either version.
        var cut = expected[^400].Offset;
        var beyond = expected.Where(r => r.Rec.Kind == RecordKind.Message && r.Offset + r.Rec.Length > cut).Select(r => (r.Rec.Seq, r.Rec.Length)).ToList();
        Assert.NotEmpty(beyond);
        Assert.Equal(beyond, BlockIndexFile.MessagesBeyond(fs, "/crash/v1/0000000001.blk", cut, 0));
        Assert.Equal(beyond, BlockIndexFile.MessagesBeyond(fs, "/crash/v2/0000000001.blk", cut, 0));

        // A seal summary (version 3) is no index for replays or rebuilds, but still names what a cut took:
        // every sequence above the last message left, up to the block's last, the cut bytes with the first.
        fs.CreateDirectory("/crash/v3");
        var messages = expected.Where(r => r.Rec.Kind == RecordKind.Message).Select(r => r.Rec.Seq).ToList();
        BlockIndexFile.WriteSummary(fs, "/crash/v3/0000000001.blk", block.Length, messages.Min(), messages.Max());
        Assert.Null(BlockIndexFile.TryLoad(fs, "/crash/v3/0000000001.blk", block.Length));
        Assert.True(BlockIndexFile.Describes(fs, "/crash/v3/0000000001.blk", block.Length));
        Assert.Empty(BlockIndexFile.MessagesBeyond(fs, "/crash/v3/0000000001.blk", block.Length, messages.Max()));
        var left = expected.Where(r => r.Rec.Kind == RecordKind.Message && r.Offset + r.Rec.Length <= cut).Max(r => r.Rec.Seq);
        var fromSummary = BlockIndexFile.MessagesBeyond(fs, "/crash/v3/0000000001.blk", cut, left);
        Assert.Equal(Enumerable.Range(0, (int)(messages.Max() - left)).Select(i => left + 1 + (ulong)i), fromSummary.Select(m => m.Seq));
        Assert.Equal(block.Length - cut, fromSummary.Sum(m => m.Length));
        Assert.Superset(beyond.Select(b => b.Seq).ToHashSet(), fromSummary.Select(m => m.Seq).ToHashSet());

        // A resumed walk continues exactly where it stopped.
        var reader = new BlockIndexFile.Reader(v2);
        for (var i = 0; i < 1000; i++)
        {
            reader.Next(out _, out _, out _);
        }
        var mark = reader.Position;
        var again = new BlockIndexFile.Reader(v2);
        again.Seek(mark);
        Assert.True(again.Next(out var offset, out var rec, out _));
        Assert.Equal(expected[1000].Offset, offset);
        Assert.Equal(expected[1000].Rec, rec);

        // ~10 bytes a record instead of 40 plus the subject.
        Assert.True(v2.Length * 3 < v1.Length, $"version 2 {v2.Length} bytes, version 1 {v1.Length}");
    }

    [Fact]
    public void AStoreWithVersion1IndexesOpensFromThem()
    {
        var fs = new CrashFileSystem();
        var options = CrashStores.Options(fs, blockSize: 8 * 1024) with { CheckpointInterval = Timeout.InfiniteTimeSpan };
        var store = CrashStores.Open(options);
        var payloads = new Dictionary<ulong, string>();
        for (var i = 0; i < 2000; i++)
        {
            payloads[store.StoreMsg($"v1.{i % 5}", default, System.Text.Encoding.UTF8.GetBytes($"m{i}")).Seq] = $"m{i}";
        }
        store.Stop();
        // Replace every index with its version 1 form and drop the state file, so the open replays them.
        fs.Delete(Path.Combine(CrashStores.Dir, "index.db"));
        var blocks = fs.ListFiles(Path.Combine(CrashStores.Dir, "msgs"), ".blk");
        foreach (var path in blocks)
        {
            using var b = fs.Open(path, StoreFileMode.Open);
            var v1 = Version1(b.ReadAll());
            using var f = fs.Open(Path.ChangeExtension(path, ".idx"), StoreFileMode.Create);
            f.Write(v1, 0);
            f.Sync();
        }
        store = CrashStores.Open(options);
        Assert.False(store.OpenedFromState);
        var sm = new StoredMessage();
        foreach (var (seq, data) in payloads)
        {
            Assert.Equal(data, System.Text.Encoding.UTF8.GetString(store.LoadMsg(seq, sm)!.Data.Span));
        }
        Assert.Equal(400UL, store.FilteredState(1, "v1.3").Msgs);
        store.Stop();
        Assert.True(blocks.Count > 5, $"{blocks.Count} blocks");
    }
}
