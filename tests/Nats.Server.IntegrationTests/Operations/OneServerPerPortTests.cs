using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// One server per port and per store: a second server process on a port another one listens on exits 1
/// with Go's fatal line for that listener (compared with Go 2.9.10 run the same way), and a second server
/// on a store directory another one uses exits 1 saying so. Before this, our listeners set SO_REUSEADDR,
/// which .NET turns into SO_REUSEPORT on Linux: the second server started and shared the port (the route,
/// leaf node and gateway listeners did until they took Go's plain SO_REUSEADDR, see ListenerSocket).
/// </summary>
public sealed partial class OneServerPerPortTests
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_second_server_on_the_same_client_port_or_store_exits_with_a_clear_error()
    {
        var store = Directory.CreateTempSubdirectory("nats-one-store-").FullName;
        var other = Directory.CreateTempSubdirectory("nats-one-other-").FullName;
        try
        {
            await using var first = await KillableServer.StartAsync(go: false, store);

            var samePort = await RunAsync(KillableServer.OursStartInfo(), "-js", "-sd", other, "-a", "127.0.0.1", "-p", first.Port.ToString(System.Globalization.CultureInfo.InvariantCulture));
            Assert.Equal(1, samePort.ExitCode);
            Assert.Contains($"[FTL] Error listening on port: 127.0.0.1:{first.Port}, \"listen tcp 127.0.0.1:{first.Port}: bind: address already in use\"", samePort.Output);

            var sameStore = await RunAsync(KillableServer.OursStartInfo(), "-js", "-sd", store, "-a", "127.0.0.1", "-p", "-1");
            Assert.Equal(1, sameStore.ExitCode);
            Assert.Contains("[FTL] Can't start JetStream: store directory", sameStore.Output);
            Assert.Contains("is in use by another server", sameStore.Output);

            // The first server is untouched and still the only one answering.
            using var client = new TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, first.Port);
            Assert.DoesNotContain("Listening for client connections", sameStore.Output);
        }
        finally
        {
            Directory.Delete(store, recursive: true);
            Directory.Delete(other, recursive: true);
        }
    }

    [Fact]
    public async Task The_store_lock_is_released_when_the_holder_is_killed()
    {
        var store = Directory.CreateTempSubdirectory("nats-one-kill-").FullName;
        try
        {
            var first = await KillableServer.StartAsync(go: false, store);
            await first.DisposeAsync(); // SIGKILL
            await using var second = await KillableServer.StartAsync(go: false, store);
            Assert.True(second.Port > 0);
        }
        finally
        {
            Directory.Delete(store, recursive: true);
        }
    }

    [Theory]
    [InlineData("client")]
    [InlineData("monitor")]
    [InlineData("websocket")]
    [InlineData("mqtt")]
    [InlineData("cluster")]
    [InlineData("leafnode")]
    [InlineData("gateway")]
    public async Task A_taken_port_is_fatal_with_the_same_line_as_go(string listener)
    {
        var dir = Directory.CreateTempSubdirectory("nats-one-port-").FullName;
        using var holder = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        // The holder asks for port sharing as our listeners once did (.NET's ReuseAddress is SO_REUSEPORT too
        // on Linux): a listener that also asked for it would have shared the port instead of failing.
        holder.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        holder.Listen(1);
        var taken = ((IPEndPoint)holder.LocalEndPoint!).Port;
        try
        {
            var lines = new List<string>();
            foreach (var go in new[] { true, false })
            {
                var storeDir = Path.Combine(dir, go ? "go" : "ours");
                var conf = Path.Combine(dir, (go ? "go" : "ours") + ".conf");
                await File.WriteAllTextAsync(conf, Config(listener, taken, storeDir));
                var psi = go ? new ProcessStartInfo(GoServerProcess.BinaryPath) : KillableServer.OursStartInfo();
                var run = await RunAsync(psi, "-c", conf);
                Assert.Equal(1, run.ExitCode);
                var fatal = FatalLine().Match(run.Output);
                Assert.True(fatal.Success, $"{(go ? "Go" : "ours")}: no [FTL] line in:\n{run.Output}");
                lines.Add(fatal.Groups[1].Value.Trim());
            }
            Assert.Contains($"127.0.0.1:{taken}", lines[0]);
            Assert.Equal(lines[0], lines[1]);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static string Config(string listener, int taken, string storeDir) => listener switch
    {
        "client" => $"listen: \"127.0.0.1:{taken}\"\n",
        "monitor" => $"listen: \"127.0.0.1:-1\"\nhttp: \"127.0.0.1:{taken}\"\n",
        "websocket" => $"listen: \"127.0.0.1:-1\"\nwebsocket {{ host: \"127.0.0.1\", port: {taken}, no_tls: true }}\n",
        "cluster" => $"listen: \"127.0.0.1:-1\"\ncluster {{ name: one, listen: \"127.0.0.1:{taken}\" }}\n",
        "leafnode" => $"listen: \"127.0.0.1:-1\"\nleafnodes {{ listen: \"127.0.0.1:{taken}\" }}\n",
        "gateway" => $"listen: \"127.0.0.1:-1\"\ngateway {{ name: one, listen: \"127.0.0.1:{taken}\" }}\n",
        _ => $"listen: \"127.0.0.1:-1\"\nserver_name: one\njetstream {{ store_dir: \"{storeDir}\" }}\nmqtt {{ host: \"127.0.0.1\", port: {taken} }}\n",
    };

    private static async Task<(int ExitCode, string Output)> RunAsync(ProcessStartInfo psi, params string[] args)
    {
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        psi.RedirectStandardError = true;
        psi.RedirectStandardOutput = true;
        psi.UseShellExecute = false;
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        try
        {
            await process.WaitForExitAsync().WaitAsync(ExitTimeout);
        }
        catch (TimeoutException)
        {
            process.Kill();
            throw new Xunit.Sdk.XunitException($"the second server did not exit:\n{await stdout}{await stderr}");
        }
        return (process.ExitCode, await stdout + await stderr);
    }

    [GeneratedRegex(@"\[FTL\] (.*)")]
    private static partial Regex FatalLine();
}
