using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.JsClient;

/// <summary>
/// A real third-party client (nats.js v3, @nats-io/transport-node) runs each scenario in tests/js/scenarios.mjs
/// against our server (or, with NATS_DIFF_TARGET=go, against the Go server to validate the scenarios).
/// </summary>
public sealed class JsClientTests
{
    private static readonly string[] ScenarioNames =
    [
        "pubsub", "wildcards", "queue", "request", "headers", "noresponders", "echooff", "autounsub", "ordered", "auth",
        "token", "nkey", "permissions", "sysping",
    ];

    public static TheoryData<string> Scenarios() => new(ScenarioNames);

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task NatsJs_scenario_passes(string scenario)
    {
        // Must match the credentials scenarios.mjs uses for its auth scenarios.
        var settings = scenario switch
        {
            "auth" => new ServerSettings { User = "alice", Password = "s3cret" },
            "token" => new ServerSettings { Token = "t0k3n" },
            "nkey" => ServerSettings.Parse(["nkeys=UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAR"]),
            "permissions" => ServerSettings.Parse(["users=limited:pw,admin:pw", "pub_allow.limited=allowed.>", "sub_deny.limited=secret.>"]),
            "sysping" => SystemAccountSettings(),
            _ => new ServerSettings(),
        };
        await using var server = await TestServers.StartOursAsync(settings);
        var result = await NodeRunner.RunScenariosAsync(server.Url, scenario);
        Assert.True(result.ExitCode == 0, $"nats.js scenario '{scenario}' failed against the {server.Kind} server (exit {result.ExitCode}):\n{result.Output}");
    }

    private static ServerSettings SystemAccountSettings()
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add(SystemAccount.SystemAccountDifferentialTests.Config);
        return settings;
    }

    [Fact]
    public async Task Every_scenario_in_the_script_has_a_test_case()
    {
        var result = await NodeRunner.RunScenariosAsync("--list");
        Assert.Equal(0, result.ExitCode);
        var listed = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Equal(listed.Order(StringComparer.Ordinal), ScenarioNames.Order(StringComparer.Ordinal));
    }
}
