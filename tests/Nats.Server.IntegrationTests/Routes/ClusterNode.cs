using System.Net;
using System.Net.Sockets;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// One server of a test cluster, ours (in-process) or Go's (a process), on free loopback ports: the
/// client port the OS picks, and a route port chosen up front so peers can name it in their routes.
/// For tests that inspect our server's internals (RouteFlowControlTests); everything else uses the process
/// cluster of <see cref="Cluster.TestCluster"/>.
/// </summary>
internal sealed class ClusterNode : IAsyncDisposable
{
    private ClusterNode(ITestServer server, int routePort)
    {
        Server = server;
        RoutePort = routePort;
    }

    public ITestServer Server { get; }

    public int RoutePort { get; }

    public string Kind => Server.Kind;

    public string Url => Server.Url;

    /// <summary>Our in-process server (null for Go's).</summary>
    public Nats.Server.Hosting.NatsServer? Ours => (Server as InProcessServer)?.Server;

    public static int FreePort() => Infrastructure.FreePorts.Next();

    /// <summary>Starts <paramref name="kind"/> ("ours" or "go") with a cluster block routing to <paramref name="peerRoutePorts"/>.</summary>
    public static async Task<ClusterNode> StartAsync(string kind, int routePort, IEnumerable<int> peerRoutePorts, string clusterName = "T",
        string? extraCluster = null)
    {
        var settings = new ServerSettings();
        var routes = string.Join(", ", peerRoutePorts.Select(p => $"\"nats-route://127.0.0.1:{p}\""));
        settings.RawConfig.Add(
            $"cluster {{\n  name: {clusterName}\n  listen: \"127.0.0.1:{routePort}\"\n  routes: [{routes}]\n{extraCluster ?? ""}}}");
        ITestServer server = kind == "go" ? await GoServerProcess.StartAsync(settings) : await InProcessServer.StartAsync(settings);
        return new ClusterNode(server, routePort);
    }

    public ValueTask DisposeAsync() => Server.DisposeAsync();
}
