using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Monitoring;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// The system account across routes, Go 2.9.10 and ours in every mix (Go+Go shows what Go does): statsz,
/// connect and disconnect events of every server reach a $SYS subscriber on any server, a PING is answered by
/// every server, each server tracks the others (active_servers, a shutdown event drops one), and an account's
/// max_connections counts the account's clients on every server. Events of a Go and of our server seen by
/// the same subscriber have the same JSON keys.
/// </summary>
public sealed class SystemAccountClusterTests
{
    private const string SysUser = "sys";

    public static TheoryData<string, string> Pairs => new() { { "ours", "ours" }, { "ours", "go" }, { "go", "ours" }, { "go", "go" } };

    public static TheoryData<string, string> MixedPairs => new() { { "ours", "go" }, { "go", "ours" } };

    private static ClusterSpec Spec(string accountLimits = "", params string[] kinds) => new(kinds)
    {
        ExtraConfig = _ => $$"""
            system_account: SYS
            accounts {
              SYS { users: [ {user: sys, password: sys} ] }
              APP { users: [ {user: app, password: app} ] {{accountLimits}} }
            }
            """,
    };

    private static NatsConnection Connect(ClusterServer server, string user) =>
        new(new NatsOpts { Url = server.Url, AuthOpts = new NatsAuthOpts { Username = user, Password = user } });

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task EveryServerAnswersPingsAndTracksTheOthers(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec("", kindA, kindB, kindA));
        await using var sys = Connect(cluster[1], SysUser);
        var ids = cluster.Servers.Select(s => s.ServerId).ToHashSet();

        // Each server learns the others from their events, so every statsz ends up counting three.
        var statsz = await PingUntilAsync(sys, "$SYS.REQ.SERVER.PING", ids,
            doc => doc.GetProperty("statsz").GetProperty("active_servers").GetInt32() == 3);
        foreach (var doc in statsz.Values)
        {
            Assert.Equal("T", doc.GetProperty("server").GetProperty("cluster").GetString());
            Assert.Equal(2, doc.GetProperty("statsz").GetProperty("routes").GetArrayLength());
        }
        foreach (var endpoint in (string[])["VARZ", "CONNZ", "ROUTEZ", "SUBSZ"])
        {
            var answers = await PingUntilAsync(sys, $"$SYS.REQ.SERVER.PING.{endpoint}", ids, doc => doc.TryGetProperty("data", out _));
            Assert.Equal(ids, answers.Keys.ToHashSet());
        }
        // The cluster filter keeps every server of the named cluster and none when the name does not match.
        Assert.Equal(ids, (await PingUntilAsync(sys, "$SYS.REQ.SERVER.PING.VARZ", ids, _ => true, """{"cluster":"T"}""")).Keys.ToHashSet());
        Assert.Empty(await CollectAsync(sys, "$SYS.REQ.SERVER.PING.VARZ", """{"cluster":"X"}""", TimeSpan.FromSeconds(1)));

        if (kindA != kindB)
        {
            var go = statsz[cluster.Servers.First(s => s.Kind == "go").ServerId];
            var ours = statsz[cluster.Servers.First(s => s.Kind == "ours").ServerId];
            JsonCompare.SameKeys(go, ours);
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task AnAccountUsersConnzPingIsAnsweredByEveryServer(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec("", kindA, kindB, kindB));
        // One APP client on every server, so every answer lists one connection: the requester's own or another.
        var members = new List<NatsConnection>();
        try
        {
            foreach (var server in cluster.Servers)
            {
                var member = Connect(server, "app");
                await member.ConnectAsync();
                members.Add(member);
            }
            var ids = cluster.Servers.Select(s => s.ServerId).ToHashSet();
            foreach (var subject in (string[])["$SYS.REQ.SERVER.PING.CONNZ", "$SYS.REQ.ACCOUNT.PING.CONNZ", "$SYS.REQ.ACCOUNT.PING.STATZ"])
            {
                // The system import clamps every answer to the requester's account, on every server.
                var answers = await PingUntilAsync(members[0], subject, ids, doc => doc.TryGetProperty("data", out _));
                foreach (var doc in answers.Values)
                {
                    var data = doc.GetProperty("data");
                    if (data.TryGetProperty("connections", out _))
                    {
                        Assert.Equal(1, data.GetProperty("num_connections").GetInt32());
                    }
                    else
                    {
                        Assert.Equal(["APP"], data.GetProperty("account_statz").EnumerateArray().Select(a => a.GetProperty("acc").GetString()));
                    }
                }
            }
        }
        finally
        {
            foreach (var member in members)
            {
                await member.DisposeAsync();
            }
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task AnAccountConnsRequestIsAnsweredByEveryServerWithItsClients(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec("", kindA, kindB, kindB));
        var members = new List<NatsConnection>();
        try
        {
            // APP clients on the first two servers only: Go's connsRequest answers only where the account has local clients.
            foreach (var server in cluster.Servers.Take(2))
            {
                var member = Connect(server, "app");
                await member.ConnectAsync();
                members.Add(member);
            }
            await using var sys = Connect(cluster[2], SysUser);
            var ids = cluster.Servers.Take(2).Select(s => s.ServerId).ToHashSet();
            var answers = await PingUntilAsync(sys, "$SYS.REQ.ACCOUNT.APP.CONNS", ids, _ => true);
            foreach (var doc in answers.Values)
            {
                Assert.Equal("io.nats.server.advisory.v1.account_connections", doc.GetProperty("type").GetString());
                Assert.Equal("APP", doc.GetProperty("acc").GetString());
                Assert.Equal(1, doc.GetProperty("conns").GetInt32());
            }
            // The third server, without APP clients, stays silent.
            Assert.Equal(ids, (await CollectAsync(sys, "$SYS.REQ.ACCOUNT.APP.CONNS", "", TimeSpan.FromSeconds(1))).Keys.ToHashSet());
            if (kindA != kindB)
            {
                JsonCompare.SameKeys(answers[cluster.Servers.First(s => s.Kind == "go").ServerId], answers[cluster.Servers.First(s => s.Kind == "ours").ServerId]);
            }
        }
        finally
        {
            foreach (var member in members)
            {
                await member.DisposeAsync();
            }
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task StatszEventsOfEveryServerReachASubscriberOnAny(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec("", kindA, kindB));
        await using var sys = Connect(cluster[0], SysUser);
        var seen = new Dictionary<string, JsonElement>();
        await using var sub = await sys.SubscribeCoreAsync<byte[]>("$SYS.SERVER.*.STATSZ");
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        // Statsz intervals double from 250 ms to 30 s after start: a few seconds at most by now.
        while (seen.Count < 2)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            var doc = JsonDocument.Parse(msg.Data!).RootElement.Clone();
            var id = doc.GetProperty("server").GetProperty("id").GetString()!;
            Assert.Equal($"$SYS.SERVER.{id}.STATSZ", msg.Subject);
            seen[id] = doc;
        }
        Assert.Equal(cluster.Servers.Select(s => s.ServerId).ToHashSet(), seen.Keys.ToHashSet());
        if (kindA != kindB)
        {
            JsonCompare.SameKeys(seen[cluster.Servers.First(s => s.Kind == "go").ServerId], seen[cluster.Servers.First(s => s.Kind == "ours").ServerId]);
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task ConnectAndDisconnectEventsOfEveryServerReachASubscriberOnAny(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec("", kindA, kindB));
        await using var sys = Connect(cluster[0], SysUser);
        var events = Channel.CreateUnbounded<(string Subject, JsonElement Doc)>();
        await using var sub = await sys.SubscribeCoreAsync<byte[]>("$SYS.ACCOUNT.APP.*");
        var reading = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                events.Writer.TryWrite((msg.Subject, JsonDocument.Parse(msg.Data!).RootElement.Clone()));
            }
        });
        var connects = new Dictionary<string, JsonElement>();
        var disconnects = new Dictionary<string, JsonElement>();
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        foreach (var server in cluster.Servers)
        {
            // The subscriber's interest may still be crossing the route: connect again until its events arrive.
            while (!connects.ContainsKey(server.ServerId) || !disconnects.ContainsKey(server.ServerId))
            {
                await using (var app = Connect(server, "app"))
                {
                    await app.ConnectAsync();
                    await app.PingAsync(cts.Token);
                }
                using var wait = CancellationTokenSource.CreateLinkedTokenSource(cts.Token);
                wait.CancelAfter(TimeSpan.FromSeconds(1));
                try
                {
                    while (!connects.ContainsKey(server.ServerId) || !disconnects.ContainsKey(server.ServerId))
                    {
                        var (subject, doc) = await events.Reader.ReadAsync(wait.Token);
                        var id = doc.GetProperty("server").GetProperty("id").GetString()!;
                        if (subject.EndsWith(".CONNECT", StringComparison.Ordinal))
                        {
                            connects[id] = doc;
                        }
                        else if (subject.EndsWith(".DISCONNECT", StringComparison.Ordinal))
                        {
                            disconnects[id] = doc;
                        }
                    }
                }
                catch (OperationCanceledException) when (!cts.IsCancellationRequested)
                {
                }
            }
        }
        Assert.Equal("app", connects[cluster[1].ServerId].GetProperty("client").GetProperty("user").GetString());
        Assert.Equal("Client Closed", disconnects[cluster[1].ServerId].GetProperty("reason").GetString());
        if (kindA != kindB)
        {
            var go = cluster.Servers.First(s => s.Kind == "go").ServerId;
            var ours = cluster.Servers.First(s => s.Kind == "ours").ServerId;
            JsonCompare.SameKeys(connects[go], connects[ours]);
            JsonCompare.SameKeys(disconnects[go], disconnects[ours]);
        }
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task AShutdownEventDropsTheServer(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec("", kindA, kindB));
        await using var sys = Connect(cluster[0], SysUser);
        var ids = cluster.Servers.Select(s => s.ServerId).ToHashSet();
        await PingUntilAsync(sys, "$SYS.REQ.SERVER.PING", ids, doc => doc.GetProperty("statsz").GetProperty("active_servers").GetInt32() == 2);
        await using var shutdowns = await sys.SubscribeCoreAsync<byte[]>("$SYS.SERVER.*.SHUTDOWN");
        await sys.PingAsync();
        var leaving = cluster[1].ServerId;

        await cluster[1].StopAsync();

        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        var shutdown = await shutdowns.Msgs.ReadAsync(cts.Token);
        Assert.Equal($"$SYS.SERVER.{leaving}.SHUTDOWN", shutdown.Subject);
        var remaining = new HashSet<string> { cluster[0].ServerId };
        var after = await PingUntilAsync(sys, "$SYS.REQ.SERVER.PING", remaining, _ => true);
        Assert.Equal(1, after[cluster[0].ServerId].GetProperty("statsz").GetProperty("active_servers").GetInt32());
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task AccountMaxConnectionsCountsTheClientsOfEveryServer(string kindA, string kindB)
    {
        await using var cluster = await TestCluster.StartAsync(Spec(", limits { max_connections: 2 }", kindA, kindB));
        var (a, b) = (cluster[0], cluster[1]);
        await using var sys = Connect(a, SysUser);
        await using var conns = await sys.SubscribeCoreAsync<byte[]>("$SYS.SERVER.ACCOUNT.APP.CONNS");
        await sys.PingAsync();

        using var first = await RawLogin.ConnectAsync(a.ClientPort, "app");
        Assert.True(first.Accepted, first.Text);
        using var second = await RawLogin.ConnectAsync(b.ClientPort, "app");
        Assert.True(second.Accepted, second.Text);
        // A hears B's count on its own subscription at the same time as the subscriber does.
        await UntilConnsAsync(conns, b.ServerId, 1);

        using var third = await RawLogin.ConnectAsync(a.ClientPort, "app");
        Assert.False(third.Accepted, third.Text);
        Assert.Contains("-ERR 'maximum account active connections exceeded'", third.Text, StringComparison.Ordinal);

        // B's client leaves: A counts it gone and admits another.
        second.Dispose();
        await UntilConnsAsync(conns, b.ServerId, 0);
        using var fourth = await RawLogin.ConnectAsync(a.ClientPort, "app");
        Assert.True(fourth.Accepted, fourth.Text);
    }

    private static async Task UntilConnsAsync(INatsSub<byte[]> conns, string serverId, int count)
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        while (true)
        {
            var msg = await conns.Msgs.ReadAsync(cts.Token);
            var doc = JsonDocument.Parse(msg.Data!).RootElement;
            if (doc.GetProperty("server").GetProperty("id").GetString() == serverId && doc.GetProperty("conns").GetInt32() == count)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Sends <paramref name="subject"/> with a fresh inbox until one round brings an answer from every server in
    /// <paramref name="ids"/> that satisfies <paramref name="done"/> (interest and server tracking settle meanwhile).
    /// </summary>
    private static async Task<Dictionary<string, JsonElement>> PingUntilAsync(NatsConnection sys, string subject, HashSet<string> ids,
        Func<JsonElement, bool> done, string body = "")
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        Dictionary<string, JsonElement> last = [];
        while (!cts.IsCancellationRequested)
        {
            var answers = await CollectAsync(sys, subject, body, TimeSpan.FromSeconds(1), ids.Count);
            last = answers;
            if (ids.SetEquals(answers.Keys) && answers.Values.All(done))
            {
                return answers;
            }
            await Task.Delay(100);
        }
        throw new TimeoutException($"{subject}: answers {string.Join("\n", last.Values.Select(v => v.GetRawText()))}");
    }

    /// <summary>Every answer to one request within <paramref name="window"/> (or until <paramref name="expected"/> arrived), by server id.</summary>
    private static async Task<Dictionary<string, JsonElement>> CollectAsync(NatsConnection sys, string subject, string body, TimeSpan window, int expected = int.MaxValue)
    {
        var inbox = sys.NewInbox();
        var answers = new Dictionary<string, JsonElement>();
        await using var sub = await sys.SubscribeCoreAsync<byte[]>(inbox);
        await sys.PublishAsync(subject, Encoding.UTF8.GetBytes(body), replyTo: inbox);
        using var cts = new CancellationTokenSource(window);
        try
        {
            while (answers.Count < expected)
            {
                var msg = await sub.Msgs.ReadAsync(cts.Token);
                var doc = JsonDocument.Parse(msg.Data!).RootElement.Clone();
                answers[doc.GetProperty("server").GetProperty("id").GetString()!] = doc;
            }
        }
        catch (OperationCanceledException)
        {
        }
        return answers;
    }

    /// <summary>A raw client login: CONNECT as a user, PING, and what the server answered (PONG, or -ERR and close).</summary>
    private sealed class RawLogin : IDisposable
    {
        private readonly Socket _socket;

        private RawLogin(Socket socket, string text)
        {
            _socket = socket;
            Text = text;
        }

        public string Text { get; }

        public bool Accepted => Text.Contains("PONG", StringComparison.Ordinal) && !Text.Contains("-ERR", StringComparison.Ordinal);

        public static async Task<RawLogin> ConnectAsync(int port, string user)
        {
            var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await socket.ConnectAsync("127.0.0.1", port);
            await socket.SendAsync(Encoding.ASCII.GetBytes(
                $"CONNECT {{\"verbose\":false,\"pedantic\":false,\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\nPING\r\n"), SocketFlags.None);
            var text = new StringBuilder();
            var buffer = new byte[4096];
            using var cts = new CancellationTokenSource(TestCluster.Deadline);
            // Until the PONG (admitted) or the close that follows an -ERR (refused).
            while (!text.ToString().Contains("PONG", StringComparison.Ordinal))
            {
                int n;
                try
                {
                    n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
                }
                catch (SocketException)
                {
                    break;
                }
                if (n == 0)
                {
                    break;
                }
                text.Append(Encoding.ASCII.GetString(buffer, 0, n));
            }
            return new RawLogin(socket, text.ToString());
        }

        public void Dispose() => _socket.Dispose();
    }
}
