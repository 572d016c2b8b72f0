using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// Mirrors and sources whose origin is in the other JetStream domain of a leaf connection, Go 2.9.10 and ours in
/// every pairing: the stream config names the origin's domain (NATS.Net turns it into <c>external.api</c>
/// <c>$JS.&lt;domain&gt;.API</c>), the sourcing server creates a flow-controlled push consumer through that API and
/// the origin's messages reach it across the leaf.
/// </summary>
public sealed class LeafCrossDomainSourcingTests
{
    public static TheoryData<string, string> Pairs => new() { { "go", "go" }, { "ours", "ours" }, { "ours", "go" }, { "go", "ours" } };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task HubMirrorsAndSourcesTheLeafsStreamAndTheLeafMirrorsTheHubs(string hubKind, string leafKind)
    {
        await using var topology = await LeafTopology.StartAsync([hubKind], [leafKind], jetStreamDomains: ("hub", "spoke"));
        var (hub, leaf) = (topology.Hub[0], topology.Leaf[0]);
        await using var onHub = new NatsConnection(new NatsOpts { Url = hub.Url });
        await using var onLeaf = new NatsConnection(new NatsOpts { Url = leaf.Url });
        var hubJs = new NatsJSContext(onHub);
        var leafJs = new NatsJSContext(onLeaf);

        await leafJs.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]));
        for (var i = 1; i <= 3; i++)
        {
            (await leafJs.PublishAsync($"orders.{(i % 2 == 0 ? "even" : "odd")}", $"o{i}")).EnsureSuccess();
        }
        await hubJs.CreateStreamAsync(new StreamConfig("HUBEVENTS", ["events.>"]));
        (await hubJs.PublishAsync("events.1", "e1")).EnsureSuccess();

        // The origin's API crosses the leaf once the other side's domain interest arrived: retry until answered.
        await UntilAnsweredAsync(() => hubJs.CreateStreamAsync(new StreamConfig("ORDERS-MIRROR", [])
        {
            Mirror = new StreamSource { Name = "ORDERS", Domain = "spoke" },
        }).AsTask());
        await UntilAnsweredAsync(() => hubJs.CreateStreamAsync(new StreamConfig("ODD", [])
        {
            Sources = [new StreamSource { Name = "ORDERS", Domain = "spoke", FilterSubject = "orders.odd" }],
        }).AsTask());
        await UntilAnsweredAsync(() => leafJs.CreateStreamAsync(new StreamConfig("EVENTS-MIRROR", [])
        {
            Mirror = new StreamSource { Name = "HUBEVENTS", Domain = "hub" },
        }).AsTask());

        // Published after the mirrors exist: caught up first, then followed.
        for (var i = 4; i <= 5; i++)
        {
            (await leafJs.PublishAsync($"orders.{(i % 2 == 0 ? "even" : "odd")}", $"o{i}")).EnsureSuccess();
        }
        (await hubJs.PublishAsync("events.2", "e2")).EnsureSuccess();

        await WaitForMessagesAsync(hubJs, "ORDERS-MIRROR", 5, topology);
        await WaitForMessagesAsync(hubJs, "ODD", 3, topology);
        await WaitForMessagesAsync(leafJs, "EVENTS-MIRROR", 2, topology);

        // A mirror keeps the origin's sequences and subjects; a source renumbers and keeps only the filtered subject.
        var mirror = await hubJs.GetStreamAsync("ORDERS-MIRROR");
        for (ulong seq = 1; seq <= 5; seq++)
        {
            var m = await mirror.GetAsync(new StreamMsgGetRequest { Seq = seq });
            Assert.Equal($"o{seq}", Payload(m.Message.Data));
            Assert.Equal(seq % 2 == 0 ? "orders.even" : "orders.odd", m.Message.Subject);
        }
        var odd = await hubJs.GetStreamAsync("ODD");
        var oddPayloads = new List<string>();
        for (ulong seq = 1; seq <= 3; seq++)
        {
            var m = await odd.GetAsync(new StreamMsgGetRequest { Seq = seq });
            Assert.Equal("orders.odd", m.Message.Subject);
            oddPayloads.Add(Payload(m.Message.Data));
        }
        Assert.Equal(["o1", "o3", "o5"], oddPayloads);
        var eventsMirror = await leafJs.GetStreamAsync("EVENTS-MIRROR");
        Assert.Equal("events.2", (await eventsMirror.GetAsync(new StreamMsgGetRequest { Seq = 2 })).Message.Subject);

        // STREAM.INFO reports each external origin as Go's sourceInfo: caught up (lag 0), heard from lately (active in ns).
        AssertCaughtUp((await StreamInfoAsync(onHub, "ORDERS-MIRROR")).GetProperty("mirror"), "ORDERS", "$JS.spoke.API");
        var sources = (await StreamInfoAsync(onHub, "ODD")).GetProperty("sources");
        Assert.Equal(1, sources.GetArrayLength());
        AssertCaughtUp(sources[0], "ORDERS", "$JS.spoke.API");
        AssertCaughtUp((await StreamInfoAsync(onLeaf, "EVENTS-MIRROR")).GetProperty("mirror"), "HUBEVENTS", "$JS.hub.API");
    }

    private static async Task<System.Text.Json.JsonElement> StreamInfoAsync(NatsConnection connection, string stream)
    {
        var reply = await connection.RequestAsync<string, string>($"$JS.API.STREAM.INFO.{stream}", "");
        return System.Text.Json.JsonDocument.Parse(reply.Data!).RootElement.Clone();
    }

    private static void AssertCaughtUp(System.Text.Json.JsonElement info, string origin, string api)
    {
        Assert.Equal(origin, info.GetProperty("name").GetString());
        Assert.Equal(api, info.GetProperty("external").GetProperty("api").GetString());
        Assert.Equal(0UL, info.GetProperty("lag").GetUInt64());
        // Heartbeats come every second; the bound allows for a loaded machine.
        var active = info.GetProperty("active").GetInt64();
        Assert.InRange(active, 0, (long)Cluster.TestCluster.Deadline.TotalNanoseconds);
    }

    private static string Payload(object? data) => data switch
    {
        string base64 => System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(base64)),
        ReadOnlyMemory<byte> bytes => System.Text.Encoding.UTF8.GetString(bytes.Span),
        byte[] bytes => System.Text.Encoding.UTF8.GetString(bytes),
        _ => "",
    };

    private static async Task WaitForMessagesAsync(NatsJSContext js, string stream, ulong count, LeafTopology topology)
    {
        using var cts = new CancellationTokenSource(Cluster.TestCluster.Deadline);
        ulong last = 0;
        try
        {
            await Cluster.TestCluster.WaitForAsync(async () =>
            {
                var s = await js.GetStreamAsync(stream, cancellationToken: cts.Token);
                last = (ulong)s.Info.State.Messages;
                return last >= count;
            }, $"{stream} holds {count} messages", cts.Token);
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} (has {last})\n{topology.Logs()}", e);
        }
        Assert.Equal(count, (ulong)(await js.GetStreamAsync(stream)).Info.State.Messages);
    }

    private static async Task<T> UntilAnsweredAsync<T>(Func<Task<T>> request)
    {
        using var cts = new CancellationTokenSource(Cluster.TestCluster.Deadline);
        while (true)
        {
            try
            {
                return await request();
            }
            catch (Exception e) when (e is NatsException or TimeoutException && !cts.IsCancellationRequested)
            {
                await Task.Delay(200, cts.Token);
            }
        }
    }
}
