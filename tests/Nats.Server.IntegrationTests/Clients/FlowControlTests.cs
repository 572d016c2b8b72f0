using Nats.Server.IntegrationTests.Infrastructure;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// A publisher faster than its subscribers must be slowed, never get a reading subscriber cut
/// (issue 9 §1): a raw publisher writing batched PUBs as fast as the socket takes them, NATS.Net
/// subscribers that never drop on their side, against the Go server and ours.
/// </summary>
public class FlowControlTests(ITestOutputHelper output)
{
    public static TheoryData<string, int, int, int, int> Scenarios()
    {
        var data = new TheoryData<string, int, int, int, int>();
        foreach (var server in new[] { "go", "ours" })
        {
            foreach (var (payload, count) in new[] { (16, 3_000_000), (16 * 1024, 40_000) })
            {
                data.Add(server, payload, count, 1, 1);
                data.Add(server, payload, count, 1, 4);
                data.Add(server, payload, count, 4, 4);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task FastPublisher_EverySubscriberGetsEverythingInOrder(string serverKind, int payloadSize, int count, int publishers, int subscribers)
    {
        await using var server = serverKind == "go"
            ? await TestServers.StartGoAsync(new ServerSettings())
            : await TestServers.StartOursAsync(new ServerSettings());

        var subs = new List<CountingSubscriber>();
        var pubs = new List<FastPublisher>();
        try
        {
            for (var i = 0; i < subscribers; i++)
            {
                subs.Add(await CountingSubscriber.StartAsync(server.Port, "foo", count, publishers));
            }
            for (var i = 0; i < publishers; i++)
            {
                pubs.Add(await FastPublisher.ConnectAsync(server.Port));
            }
            var started = DateTime.UtcNow;
            var perPublisher = count / publishers;
            await Task.WhenAll(pubs.Select((p, i) => Task.Run(() => p.PublishAsync("foo", i, perPublisher, payloadSize))));
            var published = DateTime.UtcNow - started;

            var all = Task.WhenAll(subs.Select(s => s.Done));
            Assert.True(await Task.WhenAny(all, Task.Delay(TimeSpan.FromMinutes(3))) == all, "subscribers did not finish: "
                + string.Join(", ", subs.Select(s => s.Received)));
            foreach (var sub in subs)
            {
                Assert.Null(sub.Failure);
                Assert.Equal(count, sub.Received);
            }
            output.WriteLine($"{serverKind}: {count} x {payloadSize} B, {publishers}x{subscribers}: published in {published.TotalSeconds:F2} s, "
                + $"all delivered in {(DateTime.UtcNow - started).TotalSeconds:F2} s");
        }
        finally
        {
            foreach (var p in pubs)
            {
                await p.DisposeAsync();
            }
            foreach (var s in subs)
            {
                await s.DisposeAsync();
            }
        }
    }

    public static TheoryData<string, int, int> GoClientScenarios()
    {
        var data = new TheoryData<string, int, int>();
        foreach (var server in new[] { "go", "ours" })
        {
            data.Add(server, 16, 3_000_000);
            data.Add(server, 16 * 1024, 40_000);
        }
        return data;
    }

    /// <summary>The issue's own reproduction: nats.go publishing as fast as it can, one NATS.Net subscriber.</summary>
    [Theory]
    [MemberData(nameof(GoClientScenarios))]
    public async Task NatsGoPublisher_TheSubscriberGetsEverythingInOrder(string serverKind, int payloadSize, int count)
    {
        await NatsGoPublisher.BuildAsync();
        await using var server = serverKind == "go"
            ? await TestServers.StartGoAsync(new ServerSettings())
            : await TestServers.StartOursAsync(new ServerSettings());
        await using var subscriber = await CountingSubscriber.StartAsync(server.Port, "foo", count, 1);

        var rate = await NatsGoPublisher.PublishAsync(server.Port, "foo", count, payloadSize, 0);

        var done = await Task.WhenAny(subscriber.Done, Task.Delay(TimeSpan.FromMinutes(3)));
        Assert.True(done == subscriber.Done, $"subscriber got {subscriber.Received} of {count}");
        Assert.Null(subscriber.Failure);
        Assert.Equal(count, subscriber.Received);
        output.WriteLine($"{serverKind}: nats.go published {rate}");
    }
}
