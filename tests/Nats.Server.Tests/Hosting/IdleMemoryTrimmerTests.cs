using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Hosting;

public class IdleMemoryTrimmerTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Quiet_server_that_grew_gets_one_collection()
    {
        using var trimmer = new IdleMemoryTrimmer(() => 42, NullLogger.Instance);
        // Resident growth well past the threshold, held until the trim so no GC in between can undo it.
        var burst = Burst(64 << 20);
        var trimmed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        trimmer.Ticked += didTrim => { if (didTrim) { trimmed.TrySetResult(); } };
        await trimmed.Task.WaitAsync(Timeout);
        GC.KeepAlive(burst);
        Assert.True(trimmer.Trims >= 1);
    }

    [Fact]
    public async Task Busy_server_is_never_collected()
    {
        long activity = 0;
        using var trimmer = new IdleMemoryTrimmer(() => Interlocked.Increment(ref activity), NullLogger.Instance);
        var burst = Burst(64 << 20);
        var ticks = 0;
        var enough = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        trimmer.Ticked += _ => { if (Interlocked.Increment(ref ticks) >= 8) { enough.TrySetResult(); } };
        await enough.Task.WaitAsync(Timeout);
        GC.KeepAlive(burst);
        Assert.Equal(0, trimmer.Trims);
    }

    private static List<byte[]> Burst(int bytes)
    {
        var chunks = new List<byte[]>();
        for (var i = 0; i < bytes / (1 << 20); i++)
        {
            var chunk = new byte[1 << 20];
            Array.Fill(chunk, (byte)1);
            chunks.Add(chunk);
        }
        return chunks;
    }
}
