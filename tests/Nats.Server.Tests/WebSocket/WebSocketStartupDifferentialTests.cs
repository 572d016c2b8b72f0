using System.Diagnostics;
using Nats.Server.Configuration;
using Nats.Server.Tests.Configuration;

namespace Nats.Server.Tests.WebSocket;

/// <summary>websocket {} blocks Go accepts at parse time but refuses when the server starts (validateWebsocketOptions): same text.</summary>
public class WebSocketStartupDifferentialTests
{
    [Theory]
    [InlineData("websocket {\n  port: -1\n}\n")]
    [InlineData("websocket {\n  port: -1\n  no_tls: true\n  authorization { token: t }\n}\nauthorization { users: [ {user: a, password: b} ] }\n")]
    [InlineData("websocket {\n  port: -1\n  no_tls: true\n  jwt_cookie: jwt\n}\n")]
    public async Task Startup_refusal_matches_go(string config)
    {
        using var dir = new TempDirectory();
        var file = dir.Write("ws.conf", config);
        var options = CommandLineOptions.Parse(["-c", file]).BuildServerOptions(out _);
        var ours = ServerOptionsValidation.Validate(options);
        Assert.NotNull(ours);

        var psi = new ProcessStartInfo("/usr/sbin/nats-server") { RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (var arg in new[] { "-c", file, "-p", "-1" })
        {
            psi.ArgumentList.Add(arg);
        }
        using var go = Process.Start(psi)!;
        var stderr = go.StandardError.ReadToEndAsync();
        _ = go.StandardOutput.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await go.WaitForExitAsync(timeout.Token);
        Assert.Equal((await stderr).Trim().Split('\n')[0], "nats-server: " + ours);
    }
}
