using Nats.Server.Clients;

namespace Nats.Server.Tests.Clients;

public class OutboundChunkPoolTests
{
    [Fact]
    public void ReturnedChunk_IsReused_ForTheSameSizeClass()
    {
        var pool = new OutboundChunkPool(1024 * 1024);
        var chunk = pool.Rent(5000);
        Assert.Equal(8 * 1024, chunk.Length);
        Assert.Equal(8 * 1024, pool.RentedBytes);

        pool.Return(chunk);
        Assert.Equal(0, pool.RentedBytes);
        Assert.Equal(8 * 1024, pool.RetainedBytes);

        Assert.Same(chunk, pool.Rent(8 * 1024));
        Assert.Equal(0, pool.RetainedBytes);
        Assert.NotSame(chunk, pool.Rent(6000));
        Assert.Equal(16 * 1024, pool.PeakRentedBytes);
    }

    [Fact]
    public void IdleChunks_StayWithinTheLimit_AndTrimDropsThemAll()
    {
        var pool = new OutboundChunkPool(128 * 1024);
        var chunks = Enumerable.Range(0, 4).Select(_ => pool.Rent(OutboundChunkPool.MaxChunkSize)).ToList();
        foreach (var chunk in chunks)
        {
            pool.Return(chunk);
        }
        Assert.Equal(128 * 1024, pool.RetainedBytes);

        pool.Trim();
        Assert.Equal(0, pool.RetainedBytes);
        // By reference: xUnit compares arrays by content, and fresh uninitialized chunks are often all zeros like the
        // dropped ones, which made a content comparison fail about one run in several.
        var fresh = pool.Rent(OutboundChunkPool.MaxChunkSize);
        Assert.DoesNotContain(chunks, chunk => ReferenceEquals(chunk, fresh));
    }

    [Fact]
    public void LargerThanTheLargestChunk_ComesFromTheSharedArrayPool_AndIsNotKept()
    {
        var pool = new OutboundChunkPool(1024 * 1024);
        var big = pool.Rent(OutboundChunkPool.MaxChunkSize + 1);
        Assert.True(big.Length > OutboundChunkPool.MaxChunkSize);
        Assert.Equal(0, pool.RentedBytes);
        pool.Return(big);
        Assert.Equal(0, pool.RetainedBytes);
    }

    [Fact]
    public void OutboundBuffer_CountsTheMemoryItsChunksHold_NotOnlyTheBytesWritten()
    {
        var buffer = new OutboundBuffer();
        buffer.Write(new byte[100]);
        Assert.Equal(100, buffer.PendingBytes);
        Assert.Equal(OutboundChunkPool.MinChunkSize, buffer.HeldBytes);

        var taken = new List<ArraySegment<byte>>();
        Assert.Equal(100, buffer.TakeAll(taken, out var held));
        Assert.Equal(OutboundChunkPool.MinChunkSize, held);
        Assert.Equal(0, buffer.HeldBytes);
        Assert.Single(taken);
        OutboundBuffer.Release(taken);
    }
}
