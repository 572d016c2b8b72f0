using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// Stream admin on a three-server cluster (ours, and Go 2.9.10 for the same requests): STREAM.PURGE (filter, keep,
/// sequence) and STREAM.MSG.DELETE (erase and not) seen identically on every replica, each read from its own server's
/// /jsz; the answers compared with Go's texts; STREAM.NAMES / STREAM.LIST / $JS.API.INFO the same from every server.
/// </summary>
public class ReplicatedStreamAdminTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task PurgeAndMessageDeleteAppliedAlikeOnEveryReplica(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
            var all = cluster.Servers.ToList();
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(all[1]));
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("ADM", ["adm.>"]) { NumReplicas = 3 }, cts.Token);
            for (var i = 1; i <= 30; i++)
            {
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, i % 2 == 0 ? "adm.a" : "adm.b", $"m{i}", cts.Token);
            }

            // Purge adm.a keeping its newest 3 (even sequences 2..30: 12 go), then everything below 5, then two deletes.
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_purge_response","success":true,"purged":12}""",
                await RequestAsync(nc, "$JS.API.STREAM.PURGE.ADM", """{"filter":"adm.a","keep":3}""", cts.Token));
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_purge_response","success":true,"purged":2}""",
                await RequestAsync(nc, "$JS.API.STREAM.PURGE.ADM", """{"seq":5}""", cts.Token));
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_msg_delete_response","success":true}""",
                await RequestAsync(nc, "$JS.API.STREAM.MSG.DELETE.ADM", """{"seq":7}""", cts.Token));
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_msg_delete_response","success":true}""",
                await RequestAsync(nc, "$JS.API.STREAM.MSG.DELETE.ADM", """{"seq":29,"no_erase":true}""", cts.Token));
            // Publishing goes on after the admin entries, numbered after them.
            var next = await ReplicatedStreamTests.PublishUntilAckedAsync(js, "adm.b", "m31", cts.Token);
            Assert.Equal(31UL, next.Seq);

            // Left: odd 5..29 without 7 and 29 (11), even 26..30 (3), and 31.
            var states = await ReplicaStatesAgreeAsync(cluster, "ADM", 15, cts.Token);
            Assert.All(states, s => Assert.Equal((15L, 5UL, 31UL), (s.Messages, s.FirstSeq, s.LastSeq)));

            // A purge of everything reaches every replica too; the stream numbers on.
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_purge_response","success":true,"purged":15}""",
                await RequestAsync(nc, "$JS.API.STREAM.PURGE.ADM", "", cts.Token));
            var after = await ReplicatedStreamTests.PublishUntilAckedAsync(js, "adm.b", "m32", cts.Token);
            Assert.Equal(32UL, after.Seq);
            states = await ReplicaStatesAgreeAsync(cluster, "ADM", 1, cts.Token);
            Assert.All(states, s => Assert.Equal((1L, 32UL, 32UL), (s.Messages, s.FirstSeq, s.LastSeq)));

            // A delete of a missing message is refused by the leader, as Go's file store refuses it.
            var missing = await RequestAsync(nc, "$JS.API.STREAM.MSG.DELETE.ADM", """{"seq":3}""", cts.Token);
            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.stream_msg_delete_response","error":{"code":500,"err_code":10057,"description":"no message found"}}""",
                missing);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task NamesListAndAccountInfoAnsweredClusterWideFromEveryServer(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
            var all = cluster.Servers.ToList();
            await using (var admin = new NatsConnection(ReplicatedStreamTests.App(all[0])))
            {
                var js = new NatsJSContext(admin);
                await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("L3", ["l3.>"]) { NumReplicas = 3 }, cts.Token);
                await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("L1", ["l1.>"]), cts.Token);
                await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("L2", ["l2.>"]), cts.Token);
                for (var i = 0; i < 3; i++)
                {
                    await ReplicatedStreamTests.PublishUntilAckedAsync(js, "l3.x", $"a{i}", cts.Token);
                }
                await ReplicatedStreamTests.PublishUntilAckedAsync(js, "l1.x", "b", cts.Token);
            }
            foreach (var server in all)
            {
                await using var nc = new NatsConnection(ReplicatedStreamTests.App(server));
                using var names = JsonDocument.Parse(await RequestAsync(nc, "$JS.API.STREAM.NAMES", "", cts.Token));
                Assert.Equal(new[] { "L1", "L2", "L3" }, names.RootElement.GetProperty("streams").EnumerateArray().Select(e => e.GetString()));
                Assert.Equal(3, names.RootElement.GetProperty("total").GetInt32());

                using var paged = JsonDocument.Parse(await RequestAsync(nc, "$JS.API.STREAM.NAMES", """{"offset":1}""", cts.Token));
                Assert.Equal(new[] { "L2", "L3" }, paged.RootElement.GetProperty("streams").EnumerateArray().Select(e => e.GetString()));
                Assert.Equal((3, 1, 1024), (paged.RootElement.GetProperty("total").GetInt32(), paged.RootElement.GetProperty("offset").GetInt32(),
                    paged.RootElement.GetProperty("limit").GetInt32()));

                using var filtered = JsonDocument.Parse(await RequestAsync(nc, "$JS.API.STREAM.NAMES", """{"subject":"l3.x"}""", cts.Token));
                Assert.Equal(new[] { "L3" }, filtered.RootElement.GetProperty("streams").EnumerateArray().Select(e => e.GetString()));

                using var list = JsonDocument.Parse(await RequestAsync(nc, "$JS.API.STREAM.LIST", "", cts.Token));
                var infos = list.RootElement.GetProperty("streams").EnumerateArray().ToList();
                Assert.Equal(new[] { "L1", "L2", "L3" }, infos.Select(i => i.GetProperty("config").GetProperty("name").GetString()));
                Assert.Equal(new[] { 1L, 0L, 3L }, infos.Select(i => i.GetProperty("state").GetProperty("messages").GetInt64()));
                Assert.All(infos, i => Assert.Contains(i.GetProperty("cluster").GetProperty("leader").GetString(), all.Select(s => s.Name)));
                Assert.Equal(2, infos[2].GetProperty("cluster").GetProperty("replicas").GetArrayLength());
                Assert.Equal(3, list.RootElement.GetProperty("total").GetInt32());
                Assert.False(list.RootElement.TryGetProperty("missing", out _));

                using var info = JsonDocument.Parse(await RequestAsync(nc, "$JS.API.INFO", "", cts.Token));
                Assert.Equal(3, info.RootElement.GetProperty("streams").GetInt32());
                Assert.Equal(0, info.RootElement.GetProperty("consumers").GetInt32());
                Assert.True(info.RootElement.GetProperty("storage").GetInt64() > 0);
            }
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    internal static async Task<string> RequestAsync(NatsConnection nc, string subject, string body, CancellationToken token)
    {
        var reply = await nc.RequestAsync<string, string>(subject, body, replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(10) },
            cancellationToken: token);
        return reply.Data ?? "";
    }

    /// <summary>One stream's state on one server's own replica.</summary>
    internal sealed record ReplicaState(string Server, long Messages, ulong FirstSeq, ulong LastSeq, long Bytes, long Deleted);

    /// <summary>Every running server's own replica of <paramref name="stream"/>, from Go's account JSZ request (each server answers for itself).</summary>
    internal static async Task<List<ReplicaState>> ReplicaStatesAsync(TestCluster cluster, string stream, CancellationToken token)
    {
        var running = cluster.Servers.Where(s => s.IsRunning).ToList();
        await using var sys = new NatsConnection(new NatsOpts
        {
            Url = running[0].Url,
            AuthOpts = new NatsAuthOpts { Username = "sys", Password = "pass" },
        });
        var states = new List<ReplicaState>();
        await foreach (var reply in sys.RequestManyAsync<string, string>("$SYS.REQ.ACCOUNT.APP.JSZ", """{"streams":true}""",
            replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(2), MaxMsgs = running.Count }, cancellationToken: token))
        {
            using var doc = JsonDocument.Parse(reply.Data ?? "{}");
            if (!doc.RootElement.TryGetProperty("data", out var data) || !data.TryGetProperty("stream_detail", out var details))
            {
                continue;
            }
            var server = doc.RootElement.GetProperty("server").GetProperty("name").GetString() ?? "";
            foreach (var detail in details.EnumerateArray().Where(d => d.GetProperty("name").GetString() == stream))
            {
                var state = detail.GetProperty("state");
                states.Add(new ReplicaState(server, state.GetProperty("messages").GetInt64(), state.GetProperty("first_seq").GetUInt64(),
                    state.GetProperty("last_seq").GetUInt64(), state.GetProperty("bytes").GetInt64(),
                    state.TryGetProperty("num_deleted", out var deleted) ? deleted.GetInt64() : 0));
            }
        }
        return states;
    }

    /// <summary>Waits until every running server holds <paramref name="stream"/> with <paramref name="messages"/> messages and identical states.</summary>
    internal static async Task<List<ReplicaState>> ReplicaStatesAgreeAsync(TestCluster cluster, string stream, long messages, CancellationToken token,
        int replicas = 3)
    {
        var last = new List<ReplicaState>();
        try
        {
            await TestCluster.WaitForAsync(async () =>
            {
                var states = await ReplicaStatesAsync(cluster, stream, token);
                last = states;
                return states.Count == replicas && states.Select(s => s with { Server = "" }).Distinct().Count() == 1 && states[0].Messages == messages;
            }, $"{replicas} replicas of {stream} holding {messages} messages alike", token);
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message} (last: {string.Join(", ", last)})", e);
        }
        return last;
    }
}
