using System.Threading.Channels;
using Nats.Server.IntegrationTests.Clients;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>
/// A push consumer (ack none, no flow control: nobody asks the server to slow down) reads a file stream
/// far faster than a client takes it off the socket. The consumer must follow client flow control:
/// wait while a subscriber is over its stall threshold and go on when it drains. A subscriber that reads
/// is never cut and never misses a message (issue 22: nats.go's subscriber was cut in 2 of 5 runs).
/// </summary>
public sealed class PushFlowControlTests(ITestOutputHelper output)
{
    private const int Count = 600_000;
    private long _netGot = -1;

    [Fact]
    public async Task NatsGoAndNatsNetSubscribersAtFullSpeedGetEveryMessage()
    {
        await NatsGoProgram.BuildAsync("jspush");
        await using var server = await TestServers.StartOursAsync(new ServerSettings { JetStream = true });
        await using var nats = new NatsConnection(new NatsOpts { Url = server.Url, RequestTimeout = TimeSpan.FromSeconds(30) });
        await nats.ConnectAsync();
        // The reader has a connection of its own: a full subscription channel holds its socket reader,
        // which would also hold the API replies on a shared one.
        await using var reader = new NatsConnection(new NatsOpts
        {
            Url = server.Url,
            // The client never drops on its side: a full channel holds its socket reader instead.
            SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
        });
        await reader.ConnectAsync();
        var js = new NatsJSContext(nats);
        await js.CreateStreamAsync(new StreamConfig("PUSH", ["push.data"]) { Storage = StreamConfigStorage.File });
        // Core publishes through nats.go's fastpub; its final flush returns once the server stored them all.
        await NatsGoPublisher.PublishAsync(server.Port, "push.data", Count, 128, 0);
        var stream = await js.GetStreamAsync("PUSH");
        Assert.Equal(Count, stream.Info.State.Messages);

        var cut = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        reader.ConnectionDisconnected += (_, e) =>
        {
            cut.TrySetResult(e.Message);
            return ValueTask.CompletedTask;
        };
        var goReader = NatsGoProgram.RunAsync("jspush", TimeSpan.FromMinutes(4), server.Url, "push.data", Count.ToString());
        var netReader = ReadWithNatsNetAsync(reader, js);
        var both = Task.WhenAll(goReader, netReader);
        var first = await Task.WhenAny(both, cut.Task, Task.Delay(TimeSpan.FromMinutes(4)));
        if (first == cut.Task)
        {
            Assert.Fail($"NATS.Net subscriber disconnected: {await cut.Task}");
        }
        if (first != both)
        {
            var info = Volatile.Read(ref _netGot) < 0 ? "consumer not created" : $"{(await js.GetConsumerAsync("PUSH", "netpush")).Info.Delivered.StreamSeq} delivered";
            Assert.Fail($"the readers did not finish in 4 minutes: NATS.Net got {Volatile.Read(ref _netGot)} ({info}), nats.go {(goReader.IsCompleted ? "finished" : "still reading")}");
        }
        output.WriteLine($"nats.go: {await goReader}; NATS.Net: {await netReader}");
    }

    private async Task<string> ReadWithNatsNetAsync(NatsConnection reader, NatsJSContext js)
    {
        const string inbox = "deliver.net";
        await using var subscription = await reader.SubscribeCoreAsync<byte[]>(inbox);
        await reader.PingAsync(); // the subscription is in place before the consumer looks for interest
        await js.CreateOrUpdateConsumerAsync("PUSH", new ConsumerConfig("netpush")
        {
            DeliverSubject = inbox,
            AckPolicy = ConsumerConfigAckPolicy.None,
            DeliverPolicy = ConsumerConfigDeliverPolicy.All,
        });
        var start = DateTime.UtcNow;
        ulong got = 0;
        Volatile.Write(ref _netGot, 0);
        await foreach (var msg in subscription.Msgs.ReadAllAsync())
        {
            got++;
            Volatile.Write(ref _netGot, (long)got);
            // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>
            var seq = ulong.Parse(msg.ReplyTo!.Split('.')[5]);
            Assert.Equal(got, seq);
            if (got == Count)
            {
                break;
            }
        }
        var seconds = (DateTime.UtcNow - start).TotalSeconds;
        return $"{got} msgs in {seconds:F2}s = {got / seconds:F0} msg/s";
    }
}
