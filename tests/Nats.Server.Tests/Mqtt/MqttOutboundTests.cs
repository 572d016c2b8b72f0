using Nats.Server.Mqtt;

namespace Nats.Server.Tests.Mqtt;

public class MqttOutboundTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    [Fact]
    public void A_publisher_that_can_wait_is_told_to_stall_past_half_of_max_pending_and_one_that_cannot_is_not()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous);
        Assert.False(outbound.Enqueue(new byte[400], canStall: true));
        Assert.False(outbound.Enqueue(new byte[200], canStall: false));
        Assert.True(outbound.Enqueue(new byte[10], canStall: true));
    }

    [Fact]
    public async Task The_stalled_publisher_goes_on_once_the_writer_has_drained_the_queue()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous);
        var slow = false;
        outbound.SlowConsumer += () => slow = true;
        Assert.True(outbound.Enqueue(new byte[600], canStall: true));
        var waiting = outbound.WaitUntilDrainedAsync().AsTask();
        Assert.False(waiting.IsCompleted);

        using var sink = new MemoryStream();
        using var stop = new CancellationTokenSource();
        var writer = outbound.RunAsync(sink, stop.Token);
        await waiting.WaitAsync(Generous);
        Assert.False(slow);
        outbound.Close();
        await writer.WaitAsync(Generous);
        Assert.Equal(600, sink.Length);
    }

    [Fact]
    public async Task A_subscriber_that_writes_nothing_for_the_stuck_bound_is_reported_slow()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: TimeSpan.FromMilliseconds(50));
        var slow = new TaskCompletionSource();
        outbound.SlowConsumer += () => slow.TrySetResult();
        Assert.True(outbound.Enqueue(new byte[600], canStall: true));
        // No writer runs: the wait ends by reporting the subscriber, not by draining.
        await outbound.WaitUntilDrainedAsync().AsTask().WaitAsync(Generous);
        await slow.Task.WaitAsync(Generous);
    }

    [Fact]
    public void Past_max_pending_the_subscriber_is_reported_slow()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous);
        var slow = 0;
        outbound.SlowConsumer += () => slow++;
        outbound.Enqueue(new byte[900]);
        Assert.Equal(0, slow);
        outbound.Enqueue(new byte[200]);
        Assert.Equal(1, slow);
    }
}
