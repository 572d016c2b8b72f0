using System.Buffers.Binary;
using System.Text;
using Nats.Storage.File;
using Nats.Storage.IO;
using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests;

/// <summary>Record layouts: messages without headers and control records are written compact (no header
/// length), and blocks of full-layout records, as every earlier build wrote them, still open.</summary>
public sealed class RecordFormatTests
{
    [Fact]
    public void AMessageWithoutHeadersIsSmallerThanGosRecord()
    {
        // The scale probe's message: 128 bytes on a 9-byte subject. Go's record: 22 + 9 + 128 + 8 = 167.
        Assert.Equal(165, RecordCodec.Size(9, 0, 128, hasTtl: false));
        Assert.Equal(9 + 20 + 128 + 32, RecordCodec.Size(9, 20, 128, hasTtl: false));
        Assert.Equal(28, RecordCodec.MinSize);

        var buf = new byte[200];
        var n = RecordCodec.Write(buf, RecordKind.Message, 7, 123, 0, "SCALE.001", 9, default, new byte[128]);
        Assert.Equal(165, n);
        Assert.True(RecordCodec.TryRead(buf.AsSpan(0, n), out var rec));
        Assert.Equal(new RecordHeader(165, RecordKind.Message, 9, 0, 128, 7, 123, 0, Compact: true), rec);
        Assert.Equal("SCALE.001", Encoding.UTF8.GetString(buf.AsSpan(rec.SubjectOffset, 9)));

        // Any byte changed anywhere fails the checksum, in the compact layout as in the full one.
        for (var i = 0; i < n; i++)
        {
            buf[i] ^= 0x10;
            Assert.False(RecordCodec.TryRead(buf.AsSpan(0, n), out _), $"byte {i}");
            buf[i] ^= 0x10;
        }
    }

    [Fact]
    public void RecordsWithAndWithoutHeadersAndTtlsReadBack()
    {
        var buf = new byte[512];
        foreach (var header in new[] { Array.Empty<byte>(), "NATS/1.0\r\nA: b\r\n\r\n"u8.ToArray() })
        {
            foreach (var ttl in new long[] { 0, 99_000 })
            {
                var data = Encoding.UTF8.GetBytes("payload");
                var n = RecordCodec.Write(buf, RecordKind.Message, 42, 77, ttl, "a.b", 3, header, data);
                Assert.Equal(RecordCodec.Size(3, header.Length, data.Length, ttl != 0), n);
                Assert.True(RecordCodec.TryRead(buf.AsSpan(0, n), out var rec));
                Assert.Equal((42UL, 77L, ttl, header.Length == 0), (rec.Seq, rec.Timestamp, rec.TtlExpiry, rec.Compact));
                Assert.Equal("a.b", Encoding.UTF8.GetString(buf.AsSpan(rec.SubjectOffset, rec.SubjectLength)));
                Assert.Equal(header, buf.AsSpan(rec.HeaderOffset, rec.HeaderLength).ToArray());
                Assert.Equal(data, buf.AsSpan(rec.DataOffset, rec.DataLength).ToArray());
            }
        }
    }

    /// <summary>The full layout (header length always present), as builds before the compact one wrote it.</summary>
    private static byte[] Full(in RecordHeader rec, ReadOnlySpan<byte> record)
    {
        var ttl = rec.TtlExpiry != 0 ? 8 : 0;
        var len = 32 + ttl + rec.SubjectLength + rec.HeaderLength + rec.DataLength;
        var b = new byte[len];
        BinaryPrimitives.WriteInt32LittleEndian(b, len);
        b[4] = (byte)rec.Kind;
        b[5] = (byte)(ttl != 0 ? 1 : 0);
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(6), (ushort)rec.SubjectLength);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), rec.HeaderLength);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(12), rec.Seq);
        BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(20), rec.Timestamp);
        if (ttl != 0)
        {
            BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(28), rec.TtlExpiry);
        }
        record.Slice(rec.SubjectOffset, rec.SubjectLength + rec.HeaderLength + rec.DataLength).CopyTo(b.AsSpan(28 + ttl));
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(len - 4), Crc32C.Compute(b.AsSpan(0, len - 4)));
        return b;
    }

    [Fact]
    public void BlocksOfFullLayoutRecordsStillOpen()
    {
        var fs = new CrashFileSystem();
        var options = CrashStores.Options(fs, blockSize: 8 * 1024) with { CheckpointInterval = Timeout.InfiniteTimeSpan };
        var store = CrashStores.Open(options);
        var payloads = new Dictionary<ulong, (string Subject, string Data)>();
        for (var i = 0; i < 1500; i++)
        {
            var header = i % 5 == 0 ? "NATS/1.0\r\nX: y\r\n\r\n"u8.ToArray() : [];
            var (seq, _) = store.StoreMsg($"old.{i % 7}", header, Encoding.UTF8.GetBytes($"m{i}"), ttl: i % 9 == 0 ? 3600 : 0);
            payloads[seq] = ($"old.{i % 7}", $"m{i}");
        }
        for (ulong s = 3; s < 1500; s += 11)
        {
            store.RemoveMsg(s);
            payloads.Remove(s);
        }
        store.Stop();

        // Rewrite every block in the full layout, as an earlier build would have left it, and drop what
        // describes the compact files (indexes, state file).
        var converted = 0;
        foreach (var path in fs.ListFiles(Path.Combine(CrashStores.Dir, "msgs"), ".blk"))
        {
            byte[] block;
            using (var f = fs.Open(path, StoreFileMode.Open))
            {
                block = f.ReadAll();
            }
            var full = new List<byte>();
            for (var off = 0; off < block.Length;)
            {
                Assert.True(RecordCodec.TryRead(block.AsSpan(off), out var rec));
                converted += rec.Compact ? 1 : 0;
                full.AddRange(Full(rec, block.AsSpan(off, rec.Length)));
                off += rec.Length;
            }
            fs.Delete(path);
            using (var f = fs.Open(path, StoreFileMode.Create))
            {
                f.Write(full.ToArray(), 0);
                f.Sync();
            }
            fs.Delete(Path.ChangeExtension(path, ".idx"));
        }
        fs.Delete(Path.Combine(CrashStores.Dir, "index.db"));
        Assert.True(converted > 1000, $"{converted} compact records converted");

        store = CrashStores.Open(options);
        Assert.Null(store.State().Lost);
        var (next, _) = store.StoreMsg("new.1", default, "fresh"u8.ToArray());
        payloads[next] = ("new.1", "fresh");
        Check(store, payloads);
        store.Stop();

        // Reopened from the state file, and again from the blocks alone (the indexes sealed since list both layouts).
        store = CrashStores.Open(options);
        Check(store, payloads);
        store.Stop();
        fs.Delete(Path.Combine(CrashStores.Dir, "index.db"));
        store = CrashStores.Open(options);
        Assert.False(store.OpenedFromState);
        Check(store, payloads);
        store.Stop();
    }

    private static void Check(FileStore store, Dictionary<ulong, (string Subject, string Data)> payloads)
    {
        var sm = new StoredMessage();
        foreach (var (seq, (subject, data)) in payloads)
        {
            var m = store.LoadMsg(seq, sm);
            Assert.NotNull(m);
            Assert.Equal(subject, m.Subject);
            Assert.Equal(data, Encoding.UTF8.GetString(m.Data.Span));
        }
        Assert.Equal((ulong)payloads.Count, store.State().Msgs);
        Assert.Equal((ulong)payloads.Count(p => p.Value.Subject == "old.3"), store.FilteredState(1, "old.3").Msgs);
    }
}
