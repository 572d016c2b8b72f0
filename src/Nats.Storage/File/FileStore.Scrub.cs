using Nats.Storage.Core;

namespace Nats.Storage.File;

/// <summary>
/// Scrubbing: sealed blocks are re-read from disk (not from the cache) and every record verified, so
/// bit rot in messages nobody reads is found. Reading and verifying happen outside the store lock;
/// only a block with damage takes the lock, re-verifies (an erase may have been rewriting a record),
/// reports and drops the damaged messages, and rewrites the block without the bad bytes.
/// </summary>
internal sealed partial class FileStore
{
    private ITimer? _scrubTimer;
    private int _scrubbing;

    private void OnScrubTimer()
    {
        try
        {
            ScrubNow();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            Warn?.Invoke($"scrub failed: {e.Message}");
        }
    }

    /// <summary>Verifies every sealed block on disk; returns the number of damaged regions found.</summary>
    internal int ScrubNow()
    {
        if (Interlocked.Exchange(ref _scrubbing, 1) == 1)
        {
            return 0;
        }

        try
        {
            MessageBlock[] sealedBlocks;
            lock (Sync)
            {
                if (Closed)
                {
                    return 0;
                }

                sealedBlocks = _blocks.Where(b => b != _active && b.Sealed).ToArray();
            }
            var found = 0;
            foreach (var block in sealedBlocks)
            {
                if (ReadAndFindDamage(block.File, block.Length) is null)
                {
                    continue;
                }

                lock (Sync)
                {
                    if (Closed || !_byId.ContainsKey(block.Id))
                    {
                        continue;
                    }

                    var damage = ReadAndFindDamage(block.File, block.Length);
                    if (damage is null)
                    {
                        continue;
                    }

                    found += damage.Count;
                    HandleDamage(block, damage);
                    OnCommit();
                }
                FireEvents();
            }
            return found;
        }
        finally
        {
            Volatile.Write(ref _scrubbing, 0);
        }
    }

    /// <summary>Damaged regions (offset, length) of the file's first <paramref name="length"/> bytes, or null.</summary>
    private static List<(int Offset, int Length)>? ReadAndFindDamage(IO.IStoreFile file, int length)
    {
        var buf = MessageBlock.Rent(length);
        try
        {
            var read = 0;
            while (read < length)
            {
                var n = file.Read(buf.AsSpan(read, length - read), read);
                if (n <= 0)
                {
                    break;
                }

                read += n;
            }
            buf.AsSpan(read, length - read).Clear(); // a file cut short: zeros fail every checksum
            List<(int, int)>? damage = null;
            for (var off = 0; off < length;)
            {
                if (RecordCodec.TryRead(buf.AsSpan(off, length - off), out var rec))
                {
                    off += rec.Length;
                    continue;
                }
                var next = NextValidRecord(buf, off + 1, length);
                (damage ??= []).Add((off, next - off));
                off = next;
            }
            return damage;
        }
        catch (ObjectDisposedException)
        {
            return null; // rewritten or removed meanwhile; the new file is verified next time
        }
        finally
        {
            MessageBlock.ReturnRented(buf);
        }
    }

    /// <summary>Under the lock: every live message stored in a damaged region is reported and removed;
    /// the block is rewritten from what still verifies on disk.</summary>
    private void HandleDamage(MessageBlock block, List<(int Offset, int Length)> damage)
    {
        foreach (var (offset, length) in damage)
        {
            var any = false;
            for (var s = Math.Max(block.MinSeq, FirstSeq); s != 0 && s <= block.MaxSeq && s <= LastSeq; s++)
            {
                if (!Slots.Contains(s))
                {
                    continue;
                }

                ref var slot = ref Slots[s];
                if (!slot.HasMessage || slot.A != block.Id || slot.B < offset || slot.B >= offset + length)
                {
                    continue;
                }

                var size = slot.Size;
                RemoveSlot(s, erase: false, bulk: false);
                RecordLost(s, (ulong)size, $"block {block.Id}: message {s} damaged on disk ({length} bytes at offset {offset}); dropped", block.Id);
                any = true;
            }
            if (!any)
            {
                RecordLost(0, (ulong)length, $"block {block.Id}: {length} damaged bytes at offset {offset} (no live message)", block.Id);
            }
        }
        _cached.Remove(block);
        block.DropCache();
        RepairBlock(block);
    }
}
