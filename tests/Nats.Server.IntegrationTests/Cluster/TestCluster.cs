using System.Text;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>
/// N servers joined by routes, each Go 2.9.10 or ours as a real process on free loopback ports, with a
/// <see cref="RouteProxy"/> in front of every route port so a test can cut and restore links. Every server
/// lists every other explicitly by default (explicit routes are retried forever, so a cut link comes back),
/// and advertises its proxy, so gossiped (implicit) routes pass through the proxies too.
/// </summary>
internal sealed class TestCluster : IAsyncDisposable
{
    public static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    private readonly HashSet<(int, int)> _cut = [];
    private readonly List<ClusterServer> _servers = [];

    private TestCluster(ClusterSpec spec)
    {
        Spec = spec;
    }

    public ClusterSpec Spec { get; }

    public IReadOnlyList<ClusterServer> Servers => _servers;

    public ClusterServer this[int index] => _servers[index];

    /// <summary>Starts <paramref name="kinds"/> ("go"/"ours", one per server) in a full mesh and waits until every route is up.</summary>
    public static Task<TestCluster> StartAsync(params string[] kinds) => StartAsync(new ClusterSpec(kinds));

    public static async Task<TestCluster> StartAsync(ClusterSpec spec)
    {
        var cluster = new TestCluster(spec);
        try
        {
            for (var i = 0; i < spec.Kinds.Count; i++)
            {
                var tempDir = Directory.CreateTempSubdirectory($"nats-cluster-{(char)('a' + i)}-").FullName;
                var index = i;
                cluster._servers.Add(new ClusterServer(i, spec.Kinds[i], tempDir, new RouteProxy(), () => cluster.ConfigFor(index), spec.ExtraArgs)
                {
                    StoreDir = spec.StoreDirOf?.Invoke(i) ?? Path.Combine(tempDir, "store"),
                    Routed = !spec.Standalone,
                    EnvironmentVariables = spec.Environment,
                });
            }
            // In order: a server whose peers are not up yet keeps retrying its explicit routes, as in production.
            foreach (var server in cluster._servers)
            {
                await server.StartAsync();
            }
            if (spec.WaitForMesh)
            {
                await cluster.WaitForMeshAsync();
            }
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>The configuration file of server <paramref name="index"/>, rendered at each start.</summary>
    private string ConfigFor(int index)
    {
        var self = _servers[index];
        var routes = Spec.RoutesOf(index, _servers.Count).Select(j => $"\"nats-route://127.0.0.1:{_servers[j].Proxy.Port}\"");
        var sb = new StringBuilder();
        sb.Append("server_name: ").Append(Spec.ServerNamePrefix).Append(self.Name).Append('\n');
        if (Spec.ExtraConfig is { } extra)
        {
            sb.Append(extra(self)).Append('\n');
        }
        if (Spec.Standalone)
        {
            return sb.ToString();
        }
        sb.Append("cluster {\n");
        sb.Append("  name: ").Append(Spec.ClusterName).Append('\n');
        sb.Append("  listen: \"127.0.0.1:-1\"\n");
        sb.Append("  advertise: \"127.0.0.1:").Append(self.Proxy.Port).Append("\"\n");
        sb.Append("  routes: [").Append(string.Join(", ", routes)).Append("]\n");
        if (Spec.ExtraClusterConfig is { } extraCluster)
        {
            sb.Append(extraCluster).Append('\n');
        }
        if (Spec.ClusterConfigOf is { } own)
        {
            sb.Append(own(self)).Append('\n');
        }
        sb.Append("}\n");
        return sb.ToString();
    }

    /// <summary>Waits until every running server has a route to every other running server, and to no one else.</summary>
    public async Task WaitForMeshAsync()
    {
        using var cts = new CancellationTokenSource(Deadline);
        var running = _servers.Where(s => s.IsRunning).ToList();
        foreach (var server in running)
        {
            var expected = running.Where(s => s != server && !IsCut(s.Index, server.Index)).Select(s => s.ServerId).ToHashSet();
            try
            {
                await WaitForAsync(async () => (await server.RoutedPeersAsync(cts.Token)).SetEquals(expected),
                    $"{server} routed to exactly [{string.Join(", ", running.Where(s => expected.Contains(s.ServerId)))}]", cts.Token);
            }
            catch (TimeoutException e)
            {
                throw new TimeoutException($"{e.Message}\n{Logs()}", e);
            }
        }
    }

    /// <summary>Cuts the link between two servers: open routes between them are closed, new ones refused, both ways.</summary>
    public void Cut(int a, int b)
    {
        _cut.Add(Key(a, b));
        ApplyCuts();
    }

    public void Restore(int a, int b)
    {
        _cut.Remove(Key(a, b));
        ApplyCuts();
    }

    /// <summary>Cuts every link of server <paramref name="index"/>: it is partitioned from the rest.</summary>
    public void Isolate(int index)
    {
        foreach (var other in _servers.Where(s => s.Index != index))
        {
            _cut.Add(Key(index, other.Index));
        }
        ApplyCuts();
    }

    public void Heal()
    {
        _cut.Clear();
        ApplyCuts();
    }

    public bool IsCut(int a, int b) => _cut.Contains(Key(a, b));

    /// <summary>Kills server <paramref name="index"/> with SIGKILL.</summary>
    public Task KillAsync(int index) => _servers[index].KillAsync();

    /// <summary>Starts a stopped or killed server again; its new server id is blocked wherever its links are cut.</summary>
    public async Task RestartAsync(int index)
    {
        await _servers[index].StartAsync();
        ApplyCuts();
    }

    /// <summary>Polls <paramref name="condition"/> until it holds (a condition on servers' state, where no event can be awaited).</summary>
    public static async Task WaitForAsync(Func<Task<bool>> condition, string what, CancellationToken cancellationToken)
    {
        string? lastError = null;
        while (true)
        {
            try
            {
                if (await condition())
                {
                    return;
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"timed out waiting for: {what}{(lastError is null ? "" : $" (last: {lastError})")}");
            }
            catch (InvalidOperationException e)
            {
                // A route between two servers can be missing for a moment (a duplicate being replaced): ask again.
                lastError = e.Message;
            }
            try
            {
                await Task.Delay(50, cancellationToken);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"timed out waiting for: {what}{(lastError is null ? "" : $" (last: {lastError})")}");
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await Task.WhenAll(_servers.Select(async s => await s.DisposeAsync()));
    }

    /// <summary>Every server's log, for a failure message.</summary>
    public string Logs() => string.Join("\n", _servers.Select(s => $"--- {s} ---\n{ConfigFor(s.Index)}\n{s.Log.Text}"));

    private void ApplyCuts()
    {
        foreach (var server in _servers)
        {
            var blocked = _servers.Where(p => p != server && IsCut(server.Index, p.Index) && p.ServerId.Length > 0).Select(p => p.ServerId).ToList();
            server.Proxy.Block(blocked);
        }
    }

    private static (int, int) Key(int a, int b) => a < b ? (a, b) : (b, a);
}

/// <summary>What a <see cref="TestCluster"/> starts.</summary>
/// <param name="Kinds">"go" or "ours", one per server (A, B, C ...).</param>
internal sealed record ClusterSpec(IReadOnlyList<string> Kinds)
{
    public string ClusterName { get; init; } = "T";

    /// <summary>Prepended to every server_name (A, B ...): clusters joined by gateways need distinct names.</summary>
    public string ServerNamePrefix { get; init; } = "";

    /// <summary>Which servers each one lists in its routes; default every other one (a full explicit mesh).</summary>
    public Func<int, int, IEnumerable<int>> RoutesOf { get; init; } = (self, count) => Enumerable.Range(0, count).Where(j => j != self);

    /// <summary>Top-level configuration per server (ping_interval, accounts, jetstream ...).</summary>
    public Func<ClusterServer, string>? ExtraConfig { get; init; }

    /// <summary>Lines added inside the cluster block (authorization, connect_retries ...).</summary>
    public string? ExtraClusterConfig { get; init; }

    /// <summary>Lines added inside one server's cluster block (its own tls {} ...).</summary>
    public Func<ClusterServer, string>? ClusterConfigOf { get; init; }

    /// <summary>Command line flags added for every server (-D, -V ...).</summary>
    public IReadOnlyList<string> ExtraArgs { get; init; } = [];

    /// <summary>Environment variables set for every server process (our test-only knobs).</summary>
    public IReadOnlyDictionary<string, string> Environment { get; init; } = new Dictionary<string, string>();

    /// <summary>Where server i keeps its JetStream store, when not in its temp directory (e.g. on a power-cut file system).</summary>
    public Func<int, string?>? StoreDirOf { get; init; }

    /// <summary>Whether StartAsync waits for the full mesh (off for topologies that are not one).</summary>
    public bool WaitForMesh { get; init; } = true;

    /// <summary>Each server stands alone, without a cluster block (JetStream in standalone mode, e.g. per leaf domain).</summary>
    public bool Standalone { get; init; }
}
