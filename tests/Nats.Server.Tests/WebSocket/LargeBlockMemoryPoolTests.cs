using Nats.Server.WebSocket;

namespace Nats.Server.Tests.WebSocket;

/// <summary>The 64 KiB blocks Kestrel's socket transport reads into on the websocket port.</summary>
public class LargeBlockMemoryPoolTests
{
    [Fact]
    public void A_rented_block_is_64_KiB_and_comes_back_after_dispose()
    {
        using var pool = new LargeBlockMemoryPool();
        var first = pool.Rent(2048);
        Assert.Equal(LargeBlockMemoryPool.BlockSize, first.Memory.Length);
        first.Memory.Span[0] = 42;
        first.Dispose();
        var second = pool.Rent();
        Assert.Same(first, second);
        Assert.Equal(42, second.Memory.Span[0]);
        second.Dispose();
    }

    [Fact]
    public void Disposing_twice_returns_the_block_once()
    {
        using var pool = new LargeBlockMemoryPool();
        var block = pool.Rent();
        block.Dispose();
        block.Dispose();
        var a = pool.Rent();
        var b = pool.Rent();
        Assert.NotSame(a, b);
    }

    [Fact]
    public void A_request_over_the_block_size_gets_its_own_array_and_is_not_pooled()
    {
        using var pool = new LargeBlockMemoryPool();
        var big = pool.Rent(LargeBlockMemoryPool.BlockSize + 1);
        Assert.Equal(LargeBlockMemoryPool.BlockSize + 1, big.Memory.Length);
        big.Dispose();
        Assert.Equal(LargeBlockMemoryPool.BlockSize, pool.Rent().Memory.Length);
    }
}
