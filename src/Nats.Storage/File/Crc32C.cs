using System.Buffers.Binary;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace Nats.Storage.File;

/// <summary>
/// CRC-32C (Castagnoli), the checksum ext4, iSCSI and many storage engines use. The SDK has no CRC in
/// the base library (System.IO.Hashing is a separate package), and the CPU instruction makes it cost
/// well under a nanosecond per byte, so every record can be verified on every read.
/// </summary>
internal static class Crc32C
{
    private static readonly uint[] Table = BuildTable();

    /// <summary>The running value to start <see cref="Update"/> with; the checksum is its complement at the end.</summary>
    public const uint Seed = 0xFFFFFFFFu;

    public static uint Compute(ReadOnlySpan<byte> data) => ~Update(Seed, data);

    public static uint Update(uint crc, ReadOnlySpan<byte> data)
    {
        if (Sse42.X64.IsSupported)
        {
            ulong c = crc;
            while (data.Length >= 8)
            {
                c = Sse42.X64.Crc32(c, BinaryPrimitives.ReadUInt64LittleEndian(data));
                data = data[8..];
            }
            crc = (uint)c;
            foreach (var b in data)
            {
                crc = Sse42.Crc32(crc, b);
            }

            return crc;
        }
        if (Crc32.Arm64.IsSupported)
        {
            while (data.Length >= 8)
            {
                crc = Crc32.Arm64.ComputeCrc32C(crc, BinaryPrimitives.ReadUInt64LittleEndian(data));
                data = data[8..];
            }
            foreach (var b in data)
            {
                crc = Crc32.ComputeCrc32C(crc, b);
            }

            return crc;
        }
        foreach (var b in data)
        {
            crc = Table[(crc ^ b) & 0xFF] ^ (crc >> 8);
        }

        return crc;
    }

    private static uint[] BuildTable()
    {
        var table = new uint[256];
        for (uint i = 0; i < 256; i++)
        {
            var c = i;
            for (var k = 0; k < 8; k++)
            {
                c = (c & 1) != 0 ? 0x82F63B78u ^ (c >> 1) : c >> 1;
            }

            table[i] = c;
        }
        return table;
    }
}
