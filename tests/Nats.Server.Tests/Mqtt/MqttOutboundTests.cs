using Nats.Server.Mqtt;

namespace Nats.Server.Tests.Mqtt;

public class MqttOutboundTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    [Fact]
    public void A_publisher_that_can_wait_is_told_to_stall_past_half_of_max_pending_and_one_that_cannot_is_not()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous, noFastProducerStall: static () => false);
        Assert.False(outbound.Enqueue(new byte[400], canStall: true, mayDrop: true));
        Assert.False(outbound.Enqueue(new byte[200], canStall: false, mayDrop: false));
        Assert.True(outbound.Enqueue(new byte[10], canStall: true, mayDrop: true));
    }

    [Fact]
    public async Task The_stalled_publisher_goes_on_once_the_writer_has_drained_the_queue()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous, noFastProducerStall: static () => false);
        var slow = false;
        outbound.SlowConsumer += () => slow = true;
        Assert.True(outbound.Enqueue(new byte[600], canStall: true, mayDrop: true));
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
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: TimeSpan.FromMilliseconds(50), noFastProducerStall: static () => false);
        var slow = new TaskCompletionSource();
        outbound.SlowConsumer += () => slow.TrySetResult();
        Assert.True(outbound.Enqueue(new byte[600], canStall: true, mayDrop: true));
        // No writer runs: the wait ends by reporting the subscriber, not by draining.
        await outbound.WaitUntilDrainedAsync().AsTask().WaitAsync(Generous);
        await slow.Task.WaitAsync(Generous);
    }

    [Fact]
    public void Past_max_pending_the_subscriber_is_reported_slow()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous, noFastProducerStall: static () => false);
        var slow = 0;
        outbound.SlowConsumer += () => slow++;
        outbound.Enqueue(new byte[900]);
        Assert.Equal(0, slow);
        outbound.Enqueue(new byte[200]);
        Assert.Equal(1, slow);
    }

    [Fact]
    public void The_stall_threshold_is_capped_as_a_client_queue_is()
    {
        var outbound = new MqttOutbound(maxPending: 64L << 20, stuckBound: Generous, noFastProducerStall: static () => false);
        Assert.False(outbound.Enqueue(new byte[(int)Nats.Server.Clients.OutboundQueue.StallThresholdCap], canStall: true, mayDrop: true));
        Assert.True(outbound.Enqueue(new byte[1], canStall: true, mayDrop: true));
    }

    [Fact]
    public void With_no_fast_producer_stall_a_publisher_never_waits_and_past_three_quarters_the_message_is_dropped()
    {
        var outbound = new MqttOutbound(maxPending: 1000, stuckBound: Generous, noFastProducerStall: static () => true);
        var drops = 0;
        var slow = 0;
        outbound.FastProducerDrop += () => drops++;
        outbound.SlowConsumer += () => slow++;
        Assert.False(outbound.Enqueue(new byte[700], canStall: true, mayDrop: true));
        Assert.Equal(0, drops);
        Assert.False(outbound.Enqueue(new byte[100], canStall: true, mayDrop: true));
        Assert.Equal(1, drops);
        // A stored message's delivery (a JetStream consumer) is never dropped: it waits instead.
        Assert.True(outbound.Enqueue(new byte[100], canStall: true, mayDrop: false));
        Assert.Equal(1, drops);
        Assert.Equal(0, slow);
    }
}
