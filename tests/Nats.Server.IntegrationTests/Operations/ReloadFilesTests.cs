using System.Text.Json;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>Reloaded settings that write files: pid_file and ports_file_dir (ours in process).</summary>
public sealed class ReloadFilesTests
{
    [Fact]
    public async Task Pid_file_and_ports_file_follow_a_reload()
    {
        await using var server = await OpsServer.StartAsync("ours", "max_payload: 1000\n");
        var pidFile = Path.Combine(server.TempDir, "reloaded.pid");
        var portsDir = Directory.CreateDirectory(Path.Combine(server.TempDir, "ports")).FullName;
        var from = server.Log.Count;
        Assert.Null(await server.ReloadAsync($"max_payload: 1000\npid_file: \"{pidFile}\"\nports_file_dir: \"{portsDir}\"\n"));

        Assert.Equal(Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture), await File.ReadAllTextAsync(pidFile));
        var portsFile = Assert.Single(Directory.GetFiles(portsDir));
        Assert.Equal($"nats-net-server_{Environment.ProcessId}.ports", Path.GetFileName(portsFile));
        using (var ports = JsonDocument.Parse(await File.ReadAllTextAsync(portsFile)))
        {
            Assert.Equal($"nats://127.0.0.1:{server.Port}", ports.RootElement.GetProperty("nats")[0].GetString());
        }
        await server.Log.WaitForAsync($"Reloaded: pid_file = {pidFile}", from);
        await server.Log.WaitForAsync($"Reloaded: ports_file_dir = {portsDir}", from);

        // Taking ports_file_dir out removes the file again.
        Assert.Null(await server.ReloadAsync($"max_payload: 1000\npid_file: \"{pidFile}\"\n"));
        Assert.Empty(Directory.GetFiles(portsDir));
    }
}
