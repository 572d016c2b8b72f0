using System.Formats.Tar;
using System.Text;
using Nats.Storage.File;

namespace Nats.Storage.Snapshots;

/// <summary>Packs messages as file-store records (<see cref="RecordCodec"/>: checksummed, TTL kept)
/// into <c>msgs/NNNNNNNNNN.blk</c> entries of about 8 MB each.</summary>
internal sealed class SnapshotChunkWriter(TarWriter tar)
{
    private const int ChunkSize = 8 << 20;

    private readonly MemoryStream _buf = new();
    private int _chunk;

    public void Add(StoredMessage sm, long ttlExpiry)
    {
        var subjectBytes = Encoding.UTF8.GetByteCount(sm.Subject);
        var size = RecordCodec.Size(subjectBytes, sm.Header.Length, sm.Data.Length, ttlExpiry != 0);
        var start = (int)_buf.Length;
        _buf.SetLength(start + size);
        RecordCodec.Write(_buf.GetBuffer().AsSpan(start, size), RecordKind.Message, sm.Sequence, sm.Timestamp, ttlExpiry,
            sm.Subject, subjectBytes, sm.Header.Span, sm.Data.Span);
        if (_buf.Length >= ChunkSize)
        {
            Flush();
        }
    }

    public void Flush()
    {
        if (_buf.Length == 0)
        {
            return;
        }

        _buf.Position = 0;
        var entry = new PaxTarEntry(TarEntryType.RegularFile, $"msgs/{++_chunk:D10}.blk") { DataStream = _buf };
        tar.WriteEntry(entry);
        _buf.SetLength(0);
    }
}
