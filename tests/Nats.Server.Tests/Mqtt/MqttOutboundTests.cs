using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Mqtt;
using Nats.Server.Transport;

namespace Nats.Server.Tests.Mqtt;

/// <summary><see cref="MqttOutbound"/>: MQTT packets in the shared <see cref="OutboundQueue"/>, with a client's flow control.</summary>
public class MqttOutboundTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);
    private const long MaxPending = 8L << 20;

    private sealed class Owner : IOutboundOwner
    {
        public void OnWriteError()
        {
        }

        public void NoteWriteActivity()
        {
        }

        public void OnWriteLoopFailed(Exception exception) => throw exception;
    }

    private static (MqttOutbound Outbound, System.IO.Pipelines.IDuplexPipe Client) Create(TimeSpan writeDeadline, bool noFastProducerStall = false)
    {
        var (transport, client) = PipeTransport.CreatePair();
        return (new MqttOutbound(new Owner(), transport, () => MaxPending, () => writeDeadline, () => noFastProducerStall), client);
    }

    private static ClientConnection Publisher(NatsServer server, bool stallable) =>
        stallable ? InternalClient.CreateStallable(server, 2, server.GlobalAccount, NullLogger.Instance)
            : InternalClient.Create(server, 2, server.GlobalAccount, NullLogger.Instance);

    [Fact]
    public void A_delivery_joins_the_publishers_flush_batch_and_a_publisher_past_the_threshold_that_can_wait_stalls()
    {
        var server = new NatsServer(new ServerOptions());
        var (outbound, _) = Create(Generous);
        var publisher = Publisher(server, stallable: true);
        Assert.True(outbound.Deliver(new byte[1024], 1000, publisher.Origin, canStall: true, mayDrop: true));
        Assert.Equal(1, publisher.FlushBatch.Count);
        Assert.False(publisher.Origin.StalledOn.MustStall);
        for (var i = 0; i < 8; i++)
        {
            outbound.Deliver(new byte[256 * 1024], 1000, publisher.Origin, canStall: true, mayDrop: true);
        }
        Assert.True(publisher.Origin.StalledOn.MustStall);
        Assert.Equal(9, outbound.Queue.OutMsgs);

        var server2 = Publisher(server, stallable: false);
        outbound.Deliver(new byte[256 * 1024], 1000, server2.Origin, canStall: false, mayDrop: false);
        Assert.False(server2.Origin.StalledOn.MustStall);
    }

    [Fact]
    public async Task The_stalled_publisher_goes_on_once_the_write_loop_has_drained_the_queue()
    {
        var server = new NatsServer(new ServerOptions());
        var (outbound, client) = Create(Generous);
        var slow = false;
        outbound.SlowConsumer += _ => slow = true;
        var publisher = Publisher(server, stallable: true);
        for (var i = 0; i < 8; i++)
        {
            outbound.Deliver(new byte[256 * 1024], 1000, publisher.Origin, canStall: true, mayDrop: true);
        }
        Assert.True(publisher.Origin.StalledOn.MustStall);
        // As a read loop does before it waits: its batch is flushed (here, the write loop is woken).
        publisher.FlushBatch.FlushAll();
        var waiting = publisher.Origin.StalledOn.WaitAllAsync().AsTask();
        Assert.False(waiting.IsCompleted);

        var writer = Task.Run(outbound.Queue.RunWriteLoopAsync);
        var reader = Task.Run(async () =>
        {
            long total = 0;
            while (total < 8 * 256 * 1024)
            {
                var result = await client.Input.ReadAsync();
                total += result.Buffer.Length;
                client.Input.AdvanceTo(result.Buffer.End);
            }
            return total;
        });
        await waiting.WaitAsync(Generous);
        Assert.Equal(8 * 256 * 1024, await reader.WaitAsync(Generous));
        Assert.False(slow);
        Assert.Equal(1, outbound.Stalls);
        outbound.Queue.TryClose();
        outbound.Queue.SignalFlush();
        await writer.WaitAsync(Generous);
    }

    [Fact]
    public async Task A_connection_that_writes_nothing_for_a_second_stops_pausing_publishers_and_is_not_cut()
    {
        var server = new NatsServer(new ServerOptions());
        var (outbound, _) = Create(Generous);
        var slow = 0;
        outbound.SlowConsumer += _ => slow++;
        var publisher = Publisher(server, stallable: true);
        for (var i = 0; i < 8; i++)
        {
            outbound.Deliver(new byte[256 * 1024], 1000, publisher.Origin, canStall: true, mayDrop: true);
        }
        await outbound.WaitUntilDrainedAsync().AsTask().WaitAsync(Generous);
        Assert.Equal(0, slow);
        publisher.Origin.StalledOn.MoveTo([]);
        // Until it writes again, further deliveries past the threshold do not pause the publisher.
        outbound.Deliver(new byte[256 * 1024], 1000, publisher.Origin, canStall: true, mayDrop: true);
        Assert.False(publisher.Origin.StalledOn.MustStall);
    }

    [Fact]
    public async Task With_a_write_deadline_below_a_second_a_connection_that_writes_nothing_until_it_passes_is_reported_slow()
    {
        var server = new NatsServer(new ServerOptions());
        var (outbound, _) = Create(TimeSpan.FromMilliseconds(50));
        var slow = new TaskCompletionSource<bool>();
        outbound.SlowConsumer += stuck => slow.TrySetResult(stuck);
        var publisher = Publisher(server, stallable: true);
        for (var i = 0; i < 8; i++)
        {
            outbound.Deliver(new byte[256 * 1024], 1000, publisher.Origin, canStall: true, mayDrop: true);
        }
        // No write loop runs: the wait ends by reporting the connection, not by draining.
        await outbound.WaitUntilDrainedAsync().AsTask().WaitAsync(Generous);
        Assert.True(await slow.Task.WaitAsync(Generous));
    }

    [Fact]
    public void Past_max_pending_the_connection_is_reported_slow_and_control_packets_still_queue()
    {
        var (outbound, _) = Create(Generous);
        var slow = new List<bool>();
        outbound.SlowConsumer += slow.Add;
        Assert.True(outbound.Deliver(new byte[MaxPending - 100], 0, null, canStall: false, mayDrop: false));
        Assert.Empty(slow);
        Assert.False(outbound.Deliver(new byte[200], 0, null, canStall: false, mayDrop: false));
        Assert.Equal([false], slow);
        Assert.True(outbound.Enqueue([0xd0, 0]));
    }

    [Fact]
    public void With_no_fast_producer_stall_a_publisher_never_waits_and_past_three_quarters_the_message_is_dropped()
    {
        var server = new NatsServer(new ServerOptions());
        var (outbound, _) = Create(Generous, noFastProducerStall: true);
        var drops = 0;
        var slow = 0;
        outbound.FastProducerDrop += () => drops++;
        outbound.SlowConsumer += _ => slow++;
        var publisher = Publisher(server, stallable: true);
        Assert.True(outbound.Deliver(new byte[MaxPending / 4 * 3 - 100], 0, publisher.Origin, canStall: true, mayDrop: true));
        Assert.False(publisher.Origin.StalledOn.MustStall);
        Assert.False(outbound.Deliver(new byte[200], 0, publisher.Origin, canStall: true, mayDrop: true));
        Assert.Equal(1, drops);
        // A stored message's delivery (a JetStream consumer) is never dropped: it waits instead.
        Assert.True(outbound.Deliver(new byte[200], 0, publisher.Origin, canStall: true, mayDrop: false));
        Assert.True(publisher.Origin.StalledOn.MustStall);
        Assert.Equal(1, drops);
        Assert.Equal(0, slow);
    }
}
