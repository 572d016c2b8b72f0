using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;

namespace Nats.Server.IntegrationTests.LeafNodes;

/// <summary>
/// A hub cluster ("HUB", one or more routed servers, each with a leaf port) and a spoke cluster ("LEAF", its
/// servers each with a remote to the hub), every server Go 2.9.10 or ours as a real process (the
/// <see cref="TestCluster"/> fixture). Each hub's leaf port is chosen once, so a restarted hub is found again by
/// its spokes' remotes.
/// </summary>
internal sealed class LeafTopology : IAsyncDisposable
{
    private LeafTopology(TestCluster hub, TestCluster leaf, int[] hubLeafPorts)
    {
        Hub = hub;
        Leaf = leaf;
        HubLeafPorts = hubLeafPorts;
    }

    public TestCluster Hub { get; }
    public TestCluster Leaf { get; }

    /// <summary>Each hub's leaf port.</summary>
    public IReadOnlyList<int> HubLeafPorts { get; }

    /// <summary>Starts the hub servers, then the spokes, and waits until every spoke has its leaf connection.</summary>
    /// <param name="hubLeafConfig">Lines inside each hub's <c>leafnodes {}</c> (authorization ...).</param>
    /// <param name="remote">The inside of each spoke's remote entry, given the hub leaf URLs (<c>url: ...</c> plus account,
    /// deny lists ...); default every hub URL.</param>
    /// <param name="jetStreamDomains">JetStream on every server with these domains (hub side, leaf side): the servers then
    /// stand alone (no cluster block), as JetStream in a one-server cluster would want routes.</param>
    public static async Task<LeafTopology> StartAsync(string[] hubKinds, string[] leafKinds, string? hubLeafConfig = null,
        Func<int, IReadOnlyList<string>, string>? remote = null, string? hubExtra = null, string? leafExtra = null, bool waitForLeafs = true,
        (string Hub, string Leaf)? jetStreamDomains = null, string? spokeLeafConfig = null)
    {
        static string JetStream(ClusterServer s, string? domain) =>
            domain is null ? "" : $"jetstream {{\n  store_dir: \"{s.StoreDir}\"\n  domain: {domain}\n}}\n";
        var ports = hubKinds.Select(_ => FreePort()).ToArray();
        var urls = ports.Select(p => $"nats-leaf://127.0.0.1:{p}").ToList();
        remote ??= (_, u) => $"urls: [{string.Join(", ", u.Select(x => $"\"{x}\""))}]";
        TestCluster? hub = null;
        try
        {
            hub = await TestCluster.StartAsync(new ClusterSpec(hubKinds)
            {
                ClusterName = "HUB",
                ServerNamePrefix = jetStreamDomains is null ? "" : "hub-",
                Standalone = jetStreamDomains is not null,
                ExtraConfig = s => $"leafnodes {{\n  listen: \"127.0.0.1:{ports[s.Index]}\"\n{hubLeafConfig}\n}}\n{hubExtra}\n{JetStream(s, jetStreamDomains?.Hub)}",
            });
            var leaf = await TestCluster.StartAsync(new ClusterSpec(leafKinds)
            {
                ClusterName = "LEAF",
                ServerNamePrefix = jetStreamDomains is null ? "" : "leaf-",
                Standalone = jetStreamDomains is not null,
                ExtraConfig = s => $"leafnodes {{\n  remotes [ {{ {remote(s.Index, urls)} }} ]\n{spokeLeafConfig}\n}}\n{leafExtra}\n{JetStream(s, jetStreamDomains?.Leaf)}",
            });
            var topology = new LeafTopology(hub, leaf, ports);
            hub = null;
            try
            {
                if (waitForLeafs)
                {
                    await topology.WaitForLeafsAsync();
                }
                return topology;
            }
            catch
            {
                await topology.DisposeAsync();
                throw;
            }
        }
        catch
        {
            if (hub is not null)
            {
                await hub.DisposeAsync();
            }
            throw;
        }
    }

    /// <summary>Waits until every running spoke has a leaf connection and the hubs count them all.</summary>
    public async Task WaitForLeafsAsync()
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        var spokes = Leaf.Servers.Where(s => s.IsRunning).ToList();
        try
        {
            foreach (var spoke in spokes)
            {
                await TestCluster.WaitForAsync(async () => await LeafCountAsync(spoke, cts.Token) >= 1, $"{spoke} has its leaf connection", cts.Token);
            }
            await TestCluster.WaitForAsync(async () =>
            {
                var total = 0;
                foreach (var hub in Hub.Servers.Where(s => s.IsRunning))
                {
                    total += await LeafCountAsync(hub, cts.Token);
                }
                return total >= spokes.Count;
            }, "the hubs count every spoke", cts.Token);
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message}\n{Logs()}", e);
        }
    }

    public static async Task<int> LeafCountAsync(ClusterServer server, CancellationToken cancellationToken = default)
    {
        using var leafz = await server.GetJsonAsync("/leafz", cancellationToken);
        return leafz.RootElement.GetProperty("leafnodes").GetInt32();
    }

    /// <summary>The subjects <paramref name="server"/> holds for its leaf connections (/leafz?subs=1), all connections together.</summary>
    public static async Task<List<string>> LeafSubjectsAsync(ClusterServer server, CancellationToken cancellationToken = default)
    {
        using var leafz = await server.GetJsonAsync("/leafz?subs=1", cancellationToken);
        var subjects = new List<string>();
        if (leafz.RootElement.GetProperty("leafs") is { ValueKind: JsonValueKind.Array } leafs)
        {
            foreach (var leaf in leafs.EnumerateArray())
            {
                if (leaf.TryGetProperty("subscriptions_list", out var list) && list.ValueKind == JsonValueKind.Array)
                {
                    subjects.AddRange(list.EnumerateArray().Select(s => s.GetString()!));
                }
            }
        }
        return subjects;
    }

    public string Logs() => $"=== hub ===\n{Hub.Logs()}\n=== leaf ===\n{Leaf.Logs()}";

    public async ValueTask DisposeAsync()
    {
        await Leaf.DisposeAsync();
        await Hub.DisposeAsync();
    }

    public static int FreePort() => Infrastructure.FreePorts.Next();
}
