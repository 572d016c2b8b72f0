using System.Buffers;
using System.Collections.Concurrent;
using Microsoft.AspNetCore.Connections;

namespace Nats.Server.WebSocket;

/// <summary>
/// The memory pool Kestrel's socket transport reads into on the websocket port. Kestrel's own pool
/// hands out 4 KiB blocks, and a socket receive fills at most one block: a publisher streaming
/// 64 KiB frames cost Kestrel 16 receives (plus its zero-byte readiness receive each) and 16 pipe
/// wake-ups per frame. With 64 KiB blocks one receive takes what a NATS client's read takes on the
/// plain port (measured: see the commit that introduced this type).
/// </summary>
internal sealed class LargeBlockMemoryPool : MemoryPool<byte>
{
    public const int BlockSize = 64 * 1024;

    // Idle blocks kept for reuse (4 MiB); beyond this, returned blocks are left to the GC.
    private const int MaxRetained = 64;

    private readonly ConcurrentQueue<Block> _free = new();
    private int _retained;

    public override int MaxBufferSize => BlockSize;

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        if (minBufferSize > BlockSize)
        {
            // The pipe never asks a pool for more than MaxBufferSize; anything else gets its own array.
            return new Block(null, new byte[minBufferSize]);
        }
        if (_free.TryDequeue(out var block))
        {
            Interlocked.Decrement(ref _retained);
            block.Rented();
            return block;
        }
        // Pinned: the socket layer would otherwise pin the block for every receive and send.
        return new Block(this, GC.AllocateUninitializedArray<byte>(BlockSize, pinned: true));
    }

    protected override void Dispose(bool disposing)
    {
        _free.Clear();
    }

    private void Return(Block block)
    {
        if (Interlocked.Increment(ref _retained) <= MaxRetained)
        {
            _free.Enqueue(block);
            return;
        }
        Interlocked.Decrement(ref _retained);
    }

    /// <summary>A block is its own owner (as Kestrel's are), so renting a pooled one allocates nothing.</summary>
    private sealed class Block(LargeBlockMemoryPool? pool, byte[] array) : IMemoryOwner<byte>
    {
        private int _rented = 1;

        public Memory<byte> Memory => array;

        public void Rented() => Volatile.Write(ref _rented, 1);

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _rented, 0) == 1)
            {
                pool?.Return(this);
            }
        }
    }

    /// <summary>Registered in the websocket listener's services; Kestrel's socket transport takes its pool from here.</summary>
    public sealed class Factory : IMemoryPoolFactory<byte>
    {
        public MemoryPool<byte> Create(MemoryPoolOptions? options = null) => new LargeBlockMemoryPool();
    }
}
