using System.Buffers.Binary;
using Microsoft.Win32.SafeHandles;

namespace Nats.Storage.File;

/// <summary>
/// A 32-byte file that keeps sequence numbers from ever going backwards: "reserved" is a sequence the
/// store promised not to reuse (rewritten, without fsync, each time the last sequence passes it), and
/// "last" is the exact last sequence at a clean stop. After damage the store resumes above both.
/// </summary>
internal sealed class StoreMeta : IDisposable
{
    private const uint Magic = 0x4154454D; // "META"
    private const int Size = 32;
    private readonly SafeFileHandle _handle;
    private readonly byte[] _buf = new byte[Size];

    public StoreMeta(string path)
    {
        _handle = System.IO.File.OpenHandle(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read);
        var n = RandomAccess.Read(_handle, _buf, 0);
        if (n == Size && BinaryPrimitives.ReadUInt32LittleEndian(_buf) == Magic
            && Crc32C.Compute(_buf.AsSpan(0, Size - 4)) == BinaryPrimitives.ReadUInt32LittleEndian(_buf.AsSpan(Size - 4)))
        {
            Valid = true;
            Reserved = BinaryPrimitives.ReadUInt64LittleEndian(_buf.AsSpan(4));
            CleanLast = BinaryPrimitives.ReadUInt64LittleEndian(_buf.AsSpan(12));
            Clean = _buf[20] == 1;
        }
        else
        {
            Existed = n > 0;
        }
    }

    public bool Valid { get; }

    /// <summary>The file existed but did not verify.</summary>
    public bool Existed { get; }

    public ulong Reserved { get; private set; }
    public ulong CleanLast { get; private set; }
    public bool Clean { get; private set; }

    public void Write(ulong reserved, ulong cleanLast, bool clean, bool sync)
    {
        Reserved = reserved;
        CleanLast = cleanLast;
        Clean = clean;
        BinaryPrimitives.WriteUInt32LittleEndian(_buf, Magic);
        BinaryPrimitives.WriteUInt64LittleEndian(_buf.AsSpan(4), reserved);
        BinaryPrimitives.WriteUInt64LittleEndian(_buf.AsSpan(12), cleanLast);
        _buf[20] = clean ? (byte)1 : (byte)0;
        _buf.AsSpan(21, Size - 25).Clear();
        BinaryPrimitives.WriteUInt32LittleEndian(_buf.AsSpan(Size - 4), Crc32C.Compute(_buf.AsSpan(0, Size - 4)));
        RandomAccess.Write(_handle, _buf, 0);
        if (sync)
            RandomAccess.FlushToDisk(_handle);
    }

    public void Sync() => RandomAccess.FlushToDisk(_handle);

    public void Dispose() => _handle.Dispose();
}
