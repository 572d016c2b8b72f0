using System.Buffers.Binary;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// Keeps sequence numbers from ever going backwards: "reserved" is a sequence the store promised not
/// to reuse (written ahead of the last sequence and made durable by a sync round before any sequence
/// above the previous durable reservation is handed out), and "last" is the exact last sequence at a
/// clean stop. Two alternating 40-byte slots, each with a generation and a checksum: a write torn by
/// power loss damages only the slot being written, so the previous state survives.
/// </summary>
internal sealed class StoreMeta : IDisposable
{
    private const uint Magic = 0x4154454D; // "META"
    private const int SlotSize = 40;
    private readonly IStoreFile _file;
    private readonly byte[] _buf = new byte[SlotSize];
    private ulong _generation;
    private int _durableSlot;
    private int _lastSlot;

    public StoreMeta(IStoreFileSystem fs, string path)
    {
        _file = fs.Open(path, StoreFileMode.OpenOrCreate);
        var all = new byte[SlotSize * 2];
        var n = _file.Read(all, 0);
        Existed = n > 0;
        for (var slot = 0; slot < 2; slot++)
        {
            var s = all.AsSpan(slot * SlotSize, SlotSize);
            if (BinaryPrimitives.ReadUInt32LittleEndian(s) != Magic
                || Crc32C.Compute(s[..(SlotSize - 4)]) != BinaryPrimitives.ReadUInt32LittleEndian(s[(SlotSize - 4)..]))
            {
                continue;
            }

            var gen = BinaryPrimitives.ReadUInt64LittleEndian(s[24..]);
            if (Valid && gen <= _generation)
            {
                continue;
            }

            Valid = true;
            _generation = gen;
            _durableSlot = _lastSlot = slot;
            Reserved = BinaryPrimitives.ReadUInt64LittleEndian(s[4..]);
            CleanLast = BinaryPrimitives.ReadUInt64LittleEndian(s[12..]);
            Clean = s[20] == 1;
        }
    }

    public bool Valid { get; }

    /// <summary>The file existed (had bytes) but no slot verified.</summary>
    public bool Existed { get; }

    public ulong Reserved { get; private set; }
    public ulong CleanLast { get; private set; }
    public bool Clean { get; private set; }

    /// <summary>The file, for the sync round.</summary>
    public IStoreFile File => _file;

    /// <summary>Generation and slot of the newest write (for <see cref="MarkDurable"/> after an outside sync).</summary>
    public (ulong Generation, int Slot) Latest => (_generation, _lastSlot);

    public void Write(ulong reserved, ulong cleanLast, bool clean, bool sync)
    {
        Reserved = reserved;
        CleanLast = cleanLast;
        Clean = clean;
        _generation++;
        var s = _buf.AsSpan();
        s.Clear();
        BinaryPrimitives.WriteUInt32LittleEndian(s, Magic);
        BinaryPrimitives.WriteUInt64LittleEndian(s[4..], reserved);
        BinaryPrimitives.WriteUInt64LittleEndian(s[12..], cleanLast);
        s[20] = clean ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt64LittleEndian(s[24..], _generation);
        BinaryPrimitives.WriteUInt32LittleEndian(s[(SlotSize - 4)..], Crc32C.Compute(s[..(SlotSize - 4)]));
        // Always into the slot that does not hold the newest durable state: several writes between
        // syncs overwrite each other, never the state a crash must fall back to.
        _lastSlot = _durableSlot ^ 1;
        _file.Write(_buf, (long)_lastSlot * SlotSize);
        if (sync)
        {
            Sync();
        }
    }

    public void Sync()
    {
        _file.Sync();
        _durableSlot = _lastSlot;
    }

    /// <summary>A sync round synced the file after the write <paramref name="latest"/> was made.</summary>
    public void MarkDurable((ulong Generation, int Slot) latest)
    {
        if (latest.Generation == _generation)
        {
            _durableSlot = latest.Slot;
        }
    }

    public void Dispose() => _file.Dispose();
}
