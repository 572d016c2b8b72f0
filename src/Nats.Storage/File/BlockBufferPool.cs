namespace Nats.Storage.File;

/// <summary>
/// Block buffers shared by every file store of the process. A returned array is kept only while the
/// pool holds less than <see cref="MaxRetainedBytes"/>, and <see cref="Trim"/> (the stores' cache
/// expiry ticks) lets go of arrays that sat unused for a whole expiry period: a pooled array has had its pages written,
/// so every retained byte is resident, and a pool that never lets go keeps a busy hour's peak for good.
/// Arrays are allocated uninitialised: a large one's pages then cost memory only where written.
/// </summary>
internal static class BlockBufferPool
{
    /// <summary>Enough for a few rotations of busy streams without going back to the allocator.</summary>
    public const long MaxRetainedBytes = 32L << 20;

    private const int MinShift = 12;
    private static readonly Stack<(byte[] Array, long Tick)>[] Buckets = CreateBuckets();
    private static long _retained;

    /// <summary>Bytes held for reuse (for tests and diagnostics).</summary>
    public static long RetainedBytes
    {
        get
        {
            lock (Buckets)
            {
                return _retained;
            }
        }
    }

    /// <summary>An array of at least <paramref name="size"/> bytes (a power of two), not cleared.</summary>
    public static byte[] Rent(int size)
    {
        if (size > 1 << 30)
        {
            return GC.AllocateUninitializedArray<byte>(size);
        }

        var shift = ShiftFor(size);
        lock (Buckets)
        {
            if (Buckets[shift - MinShift].TryPop(out var kept))
            {
                _retained -= kept.Array.Length;
                return kept.Array;
            }
        }
        return GC.AllocateUninitializedArray<byte>(1 << shift);
    }

    public static void Return(byte[] array)
    {
        if (array.Length < 1 << MinShift || array.Length > 1 << 30 || (array.Length & (array.Length - 1)) != 0)
        {
            return; // not one of ours
        }

        var shift = ShiftFor(array.Length);

        lock (Buckets)
        {
            if (_retained + array.Length <= MaxRetainedBytes)
            {
                Buckets[shift - MinShift].Push((array, Environment.TickCount64));
                _retained += array.Length;
            }
        }
    }

    /// <summary>Drops the arrays of every size none of which was returned within <paramref name="idle"/>;
    /// returns the bytes still retained.</summary>
    public static long Trim(TimeSpan idle)
    {
        lock (Buckets)
        {
            var before = Environment.TickCount64 - (long)idle.TotalMilliseconds;
            foreach (var bucket in Buckets)
            {
                if (bucket.Count == 0 || bucket.Peek().Tick > before)
                {
                    continue; // the newest came back recently: that size is in use
                }

                foreach (var (array, _) in bucket)
                {
                    _retained -= array.Length;
                }
                bucket.Clear();
            }
            return _retained;
        }
    }

    private static int ShiftFor(int size)
    {
        var shift = MinShift;
        while (shift < 30 && 1 << shift < size)
        {
            shift++;
        }

        return shift;
    }

    private static Stack<(byte[] Array, long Tick)>[] CreateBuckets()
    {
        var buckets = new Stack<(byte[], long)>[31 - MinShift];
        for (var i = 0; i < buckets.Length; i++)
        {
            buckets[i] = new Stack<(byte[], long)>();
        }

        return buckets;
    }
}
