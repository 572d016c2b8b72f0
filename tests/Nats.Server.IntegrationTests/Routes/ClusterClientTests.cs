using Nats.Server.IntegrationTests.Cluster;

namespace Nats.Server.IntegrationTests.Routes;

/// <summary>
/// nats.go and nats.js across 2- and 3-server clusters of every mix: wildcards and headers, queue groups exactly
/// once, request/reply and no-responders, unsubscribe withdrawing interest cluster-wide, and failover to a
/// server learnt from connect_urls when the first server is killed. Go+Go runs too: it validates the programs.
/// </summary>
public sealed class ClusterClientTests
{
    public static TheoryData<string, string> Cases()
    {
        var data = new TheoryData<string, string>();
        foreach (var client in new[] { "nats.go", "nats.js" })
        {
            foreach (var topology in new[] { "go,go", "go,ours", "ours,go", "ours,ours", "ours,go,ours", "go,ours,ours", "ours,ours,ours" })
            {
                data.Add(client, topology);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task ClientWorksAcrossTheCluster(string client, string topology)
    {
        await using var cluster = await TestCluster.StartAsync(topology.Split(','));
        using var cts = new CancellationTokenSource(TimeSpan.FromMinutes(3));
        await using var program = await ClientProgram.StartAsync(client, cluster.Servers.Select(s => s.Url));
        var first = cluster[0];
        var others = cluster.Servers.Skip(1).ToList();
        while (await program.ReadLineAsync(cts.Token) is { } line)
        {
            var words = line.Split(' ');
            switch (words[0])
            {
                case "CHECK":
                    // The unsubscribe has reached every other server (RS-), the remaining subscription has not gone with it.
                    foreach (var server in others)
                    {
                        await TestCluster.WaitForAsync(async () =>
                        {
                            var subjects = await server.RouteSubjectsFromAsync(first, cts.Token);
                            return !subjects.Contains(words[1]) && subjects.Contains(words[2]);
                        }, $"{server} holds {words[2]} and not {words[1]} for {first}: {string.Join(", ", await server.RouteSubjectsFromAsync(first, cts.Token))}", cts.Token);
                    }
                    await program.AnswerAsync("ok");
                    break;
                case "KILL":
                    await cluster.KillAsync(0);
                    await program.AnswerAsync("ok");
                    break;
            }
        }
        var (exitCode, errors) = await program.WaitForExitAsync(cts.Token);
        Assert.True(exitCode == 0 && program.Output.Contains("PASS", StringComparison.Ordinal),
            $"{client} on {topology} failed (exit {exitCode}):\n{program.Output}\n{errors}\n{cluster.Logs()}");

        // Every connection of the program is gone: no interest of theirs is left on any route.
        foreach (var server in others)
        {
            foreach (var peer in others.Where(p => p != server))
            {
                await TestCluster.WaitForAsync(async () => (await server.RouteSubjectsFromAsync(peer, cts.Token)).All(s => s.StartsWith('$')),
                    $"{server} forgets {peer}'s client interest", cts.Token);
            }
        }
    }
}
