using Nats.Server.IntegrationTests.JsClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>MQTT.js (npm `mqtt` 5.16.0) with protocolVersion 5 runs tests/js/mqtt5.mjs against ours, over TCP and WebSocket.</summary>
public sealed class Mqtt5JsClientTests
{
    private const string Script = "mqtt5.mjs";

    private static readonly string[] Scenarios = ["properties", "alias", "shared", "sharedqos"];

    public static TheoryData<string> All => [.. Scenarios];

    [Theory]
    [MemberData(nameof(All))]
    public async Task MqttJs5_scenario_passes(string scenario)
    {
        await using var server = await MqttTestServer.StartAsync("ours");
        var port = server.MqttPort.ToString(System.Globalization.CultureInfo.InvariantCulture);
        var result = await NodeRunner.RunScriptAsync(Script, port, server.NatsUrl, scenario);
        Assert.True(result.ExitCode == 0, $"MQTT.js 5 scenario '{scenario}' failed (exit {result.ExitCode}):\n{result.Output}");
    }

    [Fact]
    public async Task MqttJs5_properties_over_websocket()
    {
        await using var server = await MqttTestServer.StartWithWebSocketAsync("ours");
        var result = await NodeRunner.RunScriptAsync(Script, server.MqttWebSocketUrl, server.NatsUrl, "properties");
        Assert.True(result.ExitCode == 0, $"MQTT.js 5 over WebSocket failed (exit {result.ExitCode}):\n{result.Output}");
    }

    [Fact]
    public async Task Every_scenario_in_the_script_has_a_test_case()
    {
        var result = await NodeRunner.RunScriptAsync(Script, "--list");
        Assert.Equal(0, result.ExitCode);
        Assert.Equal(Scenarios.Order(), result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Order());
    }
}
