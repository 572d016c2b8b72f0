using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;

namespace Nats.Server.IntegrationTests.Gateways;

/// <summary>
/// Two clusters, "GA" and "GB", joined by a gateway, every server Go 2.9.10 or ours as a real process (the
/// <see cref="TestCluster"/> fixture). Every server lists the other cluster's gateway URLs; each gateway port is chosen
/// once, so a restarted server is found again.
/// </summary>
internal sealed class GatewayTopology : IAsyncDisposable
{
    private GatewayTopology(TestCluster a, TestCluster b)
    {
        A = a;
        B = b;
    }

    public TestCluster A { get; }
    public TestCluster B { get; }

    /// <param name="gatewayExtra">Lines inside every gateway block (authorization ...), given the cluster name.</param>
    /// <param name="remoteUrl">The URL a server of one cluster dials for the other, given the other's gateway port.</param>
    public static async Task<GatewayTopology> StartAsync(string[] aKinds, string[] bKinds, Func<string, string>? gatewayExtra = null,
        Func<string, int, string>? remoteUrl = null, bool waitForGateways = true)
    {
        var aPorts = aKinds.Select(_ => FreePort()).ToArray();
        var bPorts = bKinds.Select(_ => FreePort()).ToArray();
        remoteUrl ??= (_, port) => $"nats://127.0.0.1:{port}";
        string Block(string name, int port, string other, int[] otherPorts) =>
            $"gateway {{\n  name: {name}\n  listen: \"127.0.0.1:{port}\"\n{gatewayExtra?.Invoke(name)}\n" +
            $"  gateways: [ {{ name: {other}, urls: [{string.Join(", ", otherPorts.Select(p => $"\"{remoteUrl(other, p)}\""))}] }} ]\n}}";
        TestCluster? a = null;
        try
        {
            a = await TestCluster.StartAsync(new ClusterSpec(aKinds)
            {
                ClusterName = "GA",
                ServerNamePrefix = "GA-",
                ExtraConfig = s => Block("GA", aPorts[s.Index], "GB", bPorts),
            });
            var b = await TestCluster.StartAsync(new ClusterSpec(bKinds)
            {
                ClusterName = "GB",
                ServerNamePrefix = "GB-",
                ExtraConfig = s => Block("GB", bPorts[s.Index], "GA", aPorts),
            });
            var topology = new GatewayTopology(a, b);
            a = null;
            try
            {
                if (waitForGateways)
                {
                    await topology.WaitForGatewaysAsync();
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
            if (a is not null)
            {
                await a.DisposeAsync();
            }
            throw;
        }
    }

    /// <summary>Waits until every running server has its outbound connection to the other cluster and an inbound from it.</summary>
    public async Task WaitForGatewaysAsync()
    {
        using var cts = new CancellationTokenSource(TestCluster.Deadline);
        try
        {
            foreach (var (cluster, other) in new[] { (A, "GB"), (B, "GA") })
            {
                foreach (var server in cluster.Servers.Where(s => s.IsRunning))
                {
                    await TestCluster.WaitForAsync(async () =>
                    {
                        using var gatewayz = await server.GetJsonAsync("/gatewayz", cts.Token);
                        var root = gatewayz.RootElement;
                        return root.GetProperty("outbound_gateways").TryGetProperty(other, out _) &&
                            root.GetProperty("inbound_gateways").TryGetProperty(other, out _);
                    }, $"{server} has its gateways to {other}", cts.Token);
                }
            }
        }
        catch (TimeoutException e)
        {
            throw new TimeoutException($"{e.Message}\n{Logs()}", e);
        }
    }

    public static async Task<JsonDocument> GatewayzAsync(ClusterServer server, string query = "") =>
        await server.GetJsonAsync("/gatewayz" + query);

    public string Logs() => $"=== GA ===\n{A.Logs()}\n=== GB ===\n{B.Logs()}";

    public async ValueTask DisposeAsync()
    {
        await B.DisposeAsync();
        await A.DisposeAsync();
    }

    private static int FreePort() => Infrastructure.FreePorts.Next();
}
