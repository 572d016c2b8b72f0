using System.Buffers;

namespace Nats.Server.Clients;

/// <summary>
/// The chunks outbound queues are built from, shared by every connection of the process: fixed
/// sizes (4 KiB doubling to 64 KiB) kept on one stack per size, with a cap on the bytes kept idle.
/// <para>
/// Why not <see cref="ArrayPool{T}.Shared"/>: it keeps at most 32 arrays of a size per core, and a
/// busy subscriber's queue cycles more than that (a 4 MiB backlog is 64 chunks of 64 KiB, released
/// all at once by the write loop and rented again one by one by the publisher). Every chunk past
/// its limit was dropped and allocated anew: about one 64 KiB array per four 16 KiB messages, which
/// the workstation GC let grow by its whole gen0 budget (tens of MiB of resident memory) before it
/// collected. Here a returned chunk is always reused while fewer than <see cref="RetainedBytesLimit"/>
/// bytes are idle, so steady traffic allocates nothing, and what is kept stays bounded.
/// </para>
/// Larger requests (a message bigger than the largest chunk) go to the shared array pool: they
/// are rare and sized by the message.
/// </summary>
internal sealed class OutboundChunkPool
{
    public const int MinChunkSize = 4 * 1024;
    public const int MaxChunkSize = 64 * 1024;

    private const int SizeClasses = 5; // 4, 8, 16, 32, 64 KiB

    /// <summary>The process-wide pool every connection's outbound queue uses.</summary>
    public static readonly OutboundChunkPool Shared = new(8L * 1024 * 1024);

    private readonly Stack<byte[]>[] _free = new Stack<byte[]>[SizeClasses];
    private long _retainedBytes;
    private long _rentedBytes;
    private long _peakRentedBytes;

    public OutboundChunkPool(long retainedBytesLimit)
    {
        RetainedBytesLimit = retainedBytesLimit;
        for (var i = 0; i < SizeClasses; i++)
        {
            _free[i] = new Stack<byte[]>();
        }
    }

    /// <summary>Most bytes of idle chunks kept for reuse; chunks returned past it are left to the GC.</summary>
    public long RetainedBytesLimit { get; }

    /// <summary>Bytes of idle chunks held now.</summary>
    public long RetainedBytes => Volatile.Read(ref _retainedBytes);

    /// <summary>Bytes of pooled-size chunks in use by queues now, and the most at any time (what the retention limit is weighed against).</summary>
    public long RentedBytes => Volatile.Read(ref _rentedBytes);

    public long PeakRentedBytes => Volatile.Read(ref _peakRentedBytes);

    /// <summary>A chunk of at least <paramref name="size"/> bytes (a pooled size up to <see cref="MaxChunkSize"/>).</summary>
    public byte[] Rent(int size)
    {
        var sizeClass = SizeClassOf(size);
        if (sizeClass < 0)
        {
            return ArrayPool<byte>.Shared.Rent(size);
        }
        var length = MinChunkSize << sizeClass;
        var rented = Interlocked.Add(ref _rentedBytes, length);
        if (rented > Volatile.Read(ref _peakRentedBytes))
        {
            Volatile.Write(ref _peakRentedBytes, rented);
        }
        var stack = _free[sizeClass];
        lock (stack)
        {
            if (stack.TryPop(out var chunk))
            {
                Interlocked.Add(ref _retainedBytes, -length);
                return chunk;
            }
        }
        // Not zeroed: every byte a queue sends was written by it first.
        return GC.AllocateUninitializedArray<byte>(length);
    }

    public void Return(byte[] chunk)
    {
        var sizeClass = ExactSizeClassOf(chunk.Length);
        if (sizeClass < 0)
        {
            ArrayPool<byte>.Shared.Return(chunk);
            return;
        }
        Interlocked.Add(ref _rentedBytes, -chunk.Length);
        if (Interlocked.Add(ref _retainedBytes, chunk.Length) > RetainedBytesLimit)
        {
            Interlocked.Add(ref _retainedBytes, -chunk.Length);
            return;
        }
        var stack = _free[sizeClass];
        lock (stack)
        {
            stack.Push(chunk);
        }
    }

    /// <summary>Drops every idle chunk (the server went quiet: the memory can go back to the system).</summary>
    public void Trim()
    {
        foreach (var stack in _free)
        {
            lock (stack)
            {
                while (stack.TryPop(out var chunk))
                {
                    Interlocked.Add(ref _retainedBytes, -chunk.Length);
                }
                stack.TrimExcess();
            }
        }
    }

    /// <summary>The smallest size class holding <paramref name="size"/> bytes, or -1 when larger than every class.</summary>
    private static int SizeClassOf(int size)
    {
        if (size > MaxChunkSize)
        {
            return -1;
        }
        var sizeClass = 0;
        while ((MinChunkSize << sizeClass) < size)
        {
            sizeClass++;
        }
        return sizeClass;
    }

    /// <summary>The size class a chunk of exactly <paramref name="length"/> bytes came from, or -1 (the shared array pool's).</summary>
    private static int ExactSizeClassOf(int length)
    {
        for (var sizeClass = 0; sizeClass < SizeClasses; sizeClass++)
        {
            if (MinChunkSize << sizeClass == length)
            {
                return sizeClass;
            }
        }
        return -1;
    }
}
