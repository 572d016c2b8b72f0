using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.Tls;

namespace Nats.Server.IntegrationTests.WebSocket;

/// <summary>Go and our server with the same websocket {} block, and each one's WebSocket port.</summary>
internal sealed partial class WebSocketPair : IAsyncDisposable
{
    private WebSocketPair(GoServerProcess go, int goPort, LoggedServer ours)
    {
        Go = go;
        GoPort = goPort;
        Ours = ours;
    }

    public GoServerProcess Go { get; }
    public int GoPort { get; }
    public LoggedServer Ours { get; }

    public IEnumerable<(string Kind, int Port)> Ports => [("go", GoPort), ("ours", Ours.Server.WebSocketPort)];

    public static async Task<WebSocketPair> StartAsync(string websocketBlockBody, params string[] more)
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add($"websocket {{\n  port: -1\n  {websocketBlockBody}\n}}");
        settings.RawConfig.AddRange(more);
        var go = GoServerProcess.StartAsync(settings);
        var ours = LoggedServer.StartAsync(settings);
        try
        {
            await Task.WhenAll(go, ours);
            var line = await GoLog.WaitForAsync(go.Result, "Listening for websocket clients on");
            var port = int.Parse(PortPattern().Match(line).Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
            return new WebSocketPair(go.Result, port, ours.Result);
        }
        catch
        {
            if (go.IsCompletedSuccessfully)
            {
                await go.Result.DisposeAsync();
            }

            if (ours.IsCompletedSuccessfully)
            {
                await ours.Result.DisposeAsync();
            }

            throw;
        }
    }

    public async Task<string> LogLineAsync(string kind, string text) => kind == "go"
        ? GoLog.WithoutClient(await GoLog.WaitForAsync(Go, text))
        : GoLog.WithoutClient(await Ours.Log.WaitForAsync(text));

    public async ValueTask DisposeAsync()
    {
        await Go.DisposeAsync();
        await Ours.DisposeAsync();
    }

    [GeneratedRegex(@":(\d+)\s*$")]
    private static partial Regex PortPattern();
}
