using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>Go 2.9.10 or ours with JetStream, a server_name and an mqtt listener on a free port.</summary>
internal sealed partial class MqttTestServer : IAsyncDisposable
{
    private readonly ITestServer _server;

    private MqttTestServer(ITestServer server, int mqttPort, int webSocketPort = 0)
    {
        _server = server;
        MqttPort = mqttPort;
        WebSocketPort = webSocketPort;
    }

    public string Kind => _server.Kind;

    public string NatsUrl => _server.Url;

    public int MqttPort { get; }

    /// <summary>The websocket {} port when started by <see cref="StartWithWebSocketAsync"/>; MQTT is at its /mqtt path.</summary>
    public int WebSocketPort { get; }

    public string MqttWebSocketUrl => $"ws://127.0.0.1:{WebSocketPort}/mqtt";

    public ITestServer Inner => _server;

    public static async Task<MqttTestServer> StartAsync(string kind, string extraMqtt = "", string? storeDir = null, params string[] extraConfig)
    {
        var settings = new ServerSettings { JetStream = true, StoreDir = storeDir };
        settings.RawConfig.Add("server_name: mqtt_test");
        settings.RawConfig.Add($"mqtt {{\n host: 127.0.0.1\n port: -1\n {extraMqtt}\n}}");
        settings.RawConfig.AddRange(extraConfig);
        if (kind == "go")
        {
            var go = await GoServerProcess.StartAsync(settings);
            var match = MqttListening().Match(go.Log);
            if (!match.Success)
            {
                await go.DisposeAsync();
                throw new InvalidOperationException("Go did not log its MQTT port:\n" + go.Log);
            }
            return new MqttTestServer(go, int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));
        }
        var ours = await InProcessServer.StartAsync(settings);
        return new MqttTestServer(ours, ours.Server.MqttPort);
    }

    /// <summary>As <see cref="StartAsync"/>, plus a <c>websocket {}</c> block (on a free port) with <paramref name="webSocketBody"/>.</summary>
    public static async Task<MqttTestServer> StartWithWebSocketAsync(string kind, string webSocketBody = "no_tls: true", string extraMqtt = "", params string[] extraConfig)
    {
        var server = await StartAsync(kind, extraMqtt, null, [$"websocket {{\n host: 127.0.0.1\n port: -1\n {webSocketBody}\n}}", .. extraConfig]);
        int port;
        if (server._server is GoServerProcess go)
        {
            var match = WebSocketListening().Match(go.Log);
            if (!match.Success)
            {
                await server.DisposeAsync();
                throw new InvalidOperationException("Go did not log its websocket port:\n" + go.Log);
            }
            port = int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
        }
        else
        {
            port = ((InProcessServer)server._server).Server.WebSocketPort;
        }
        return new MqttTestServer(server._server, server.MqttPort, port);
    }

    public ValueTask DisposeAsync() => _server.DisposeAsync();

    [GeneratedRegex(@"Listening for websocket clients on wss?://[^:]+:(\d+)")]
    private static partial Regex WebSocketListening();

    [GeneratedRegex(@"Listening for MQTT clients on (?:mqtt|tls)://[^:]+:(\d+)")]
    private static partial Regex MqttListening();
}
