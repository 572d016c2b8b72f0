using Nats.Server.IntegrationTests.JsClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>MQTT.js (npm `mqtt` 5.16.0) runs tests/js/mqtt.mjs against Go 2.9.10 and ours, nats.js on the NATS side; one fresh server per scenario.</summary>
public sealed class MqttJsClientTests
{
    private const string Script = "mqtt.mjs";

    private static readonly string[] BothServers = ["qos0", "qos1", "to-nats", "from-nats", "retained", "will", "session"];

    // Go 2.9.10 grants QoS 1 to a QoS 2 subscription and closes a connection publishing at QoS 2; ours does QoS 2 as Go 2.10.
    private static readonly string[] OursOnly = ["qos2"];

    private static readonly string[] RestartPhases = ["session-leave", "session-resume"];

    public static TheoryData<string, string> ServersAndScenarios()
    {
        var data = new TheoryData<string, string>();
        foreach (var kind in new[] { "go", "ours" })
        {
            foreach (var scenario in BothServers)
            {
                data.Add(kind, scenario);
            }
        }
        foreach (var scenario in OursOnly)
        {
            data.Add("ours", scenario);
        }
        return data;
    }

    public static TheoryData<string> Servers => new() { "go", "ours" };

    [Theory]
    [MemberData(nameof(ServersAndScenarios))]
    public async Task MqttJs_scenario_passes(string kind, string scenario)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await RunAsync(server, scenario);
    }

    /// <summary>The same scenarios with MQTT.js connecting to ws://host:port/mqtt (the websocket {} listener) instead of the MQTT port.</summary>
    [Theory]
    [MemberData(nameof(ServersAndScenarios))]
    public async Task MqttJs_scenario_passes_over_websocket(string kind, string scenario)
    {
        await using var server = await MqttTestServer.StartWithWebSocketAsync(kind);
        var result = await NodeRunner.RunScriptAsync(Script, server.MqttWebSocketUrl, server.NatsUrl, scenario);
        Assert.True(result.ExitCode == 0,
            $"MQTT.js scenario '{scenario}' over WebSocket failed against the {server.Kind} server (exit {result.ExitCode}):\n{result.Output}");
    }

    /// <summary>MQTT.js's ws offers permessage-deflate; with the block's compression on, MQTT rides compressed messages.</summary>
    [Theory]
    [MemberData(nameof(Servers))]
    public async Task MqttJs_over_a_compressing_websocket_listener(string kind)
    {
        await using var server = await MqttTestServer.StartWithWebSocketAsync(kind, "no_tls: true\n compression: true");
        foreach (var scenario in new[] { "qos1", "from-nats" })
        {
            var result = await NodeRunner.RunScriptAsync(Script, server.MqttWebSocketUrl, server.NatsUrl, scenario);
            Assert.True(result.ExitCode == 0,
                $"MQTT.js scenario '{scenario}' over compressed WebSocket failed against the {server.Kind} server (exit {result.ExitCode}):\n{result.Output}");
        }
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task MqttJs_persistent_session_gets_messages_queued_before_a_server_restart(string kind)
    {
        var storeDir = Directory.CreateTempSubdirectory("mqttjs-restart-").FullName;
        try
        {
            await using (var first = await MqttTestServer.StartAsync(kind, storeDir: storeDir))
            {
                await RunAsync(first, "session-leave");
            }
            await using var second = await MqttTestServer.StartAsync(kind, storeDir: storeDir);
            await RunAsync(second, "session-resume");
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task Every_scenario_in_the_script_has_a_test_case()
    {
        var result = await NodeRunner.RunScriptAsync(Script, "--list");
        Assert.Equal(0, result.ExitCode);
        var listed = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Equal(BothServers.Concat(OursOnly).Concat(RestartPhases).Order(), listed.Order());
    }

    private static async Task RunAsync(MqttTestServer server, string scenario)
    {
        var port = server.MqttPort.ToString(System.Globalization.CultureInfo.InvariantCulture);
        var result = await NodeRunner.RunScriptAsync(Script, port, server.NatsUrl, scenario);
        Assert.True(result.ExitCode == 0,
            $"MQTT.js scenario '{scenario}' failed against the {server.Kind} server (exit {result.ExitCode}):\n{result.Output}");
    }
}
