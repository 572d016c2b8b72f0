using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.IntegrationTests.JsClient;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>nats.js v3 (@nats-io/jetstream, kv, obj 3.4.0) runs tests/js/consumers.mjs against our server, one fresh server per scenario.</summary>
public sealed class NatsJsConsumerTests
{
    private static readonly string[] ScenarioNames = ["pull", "ordered", "kv", "obj", "objlinks", "objwatch", "kvwatch"];

    public static TheoryData<string> Scenarios() => new(ScenarioNames);

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task NatsJs_consumer_scenario_passes(string scenario)
    {
        await using var server = await TestServers.StartOursAsync(new ServerSettings { JetStream = true });
        var result = await NodeRunner.RunScriptAsync("consumers.mjs", server.Url, scenario);
        Assert.True(result.ExitCode == 0, $"nats.js consumer scenario '{scenario}' failed against the {server.Kind} server (exit {result.ExitCode}):\n{result.Output}");
    }

    [Fact]
    public async Task Every_scenario_in_the_script_has_a_test_case()
    {
        var result = await NodeRunner.RunScriptAsync("consumers.mjs", "--list");
        Assert.Equal(0, result.ExitCode);
        var listed = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Equal(ScenarioNames.Order(), listed.Order());
    }
}
