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
        "token", "nkey", "permissions", "accounts", "mappings", "imports", "sysping",
    ];

    // Scenarios that need the server driven while they run; their tests live elsewhere (Operations/).
    private static readonly string[] DrivenScenarioNames = ["ldm", "tls", "tlsmap", "ws"];

    // Must match the accounts the "imports" scenario in scenarios.mjs expects.
    private const string ImportsConfig =
        "accounts { A { users: [{user: exporter, password: pw}], exports: [{service: \"svc.>\"}, {service: ticks, response_type: stream}, {stream: \"feed.>\"}] }, "
        + "B { users: [{user: importer, password: pw}], imports: [{service: {account: A, subject: \"svc.>\"}, to: \"remote.>\"}, "
        + "{service: {account: A, subject: ticks}}, {stream: {account: A, subject: \"feed.>\"}, prefix: a}] } }";

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
            "accounts" => new ServerSettings
            {
                AuthTimeoutSeconds = ServerSettings.GenerousAuthTimeoutSeconds,
                RawConfig = { "accounts { A { users: [ {user: a, password: pa} ] }, B { users: [ {user: b, password: pb} ] } }" },
            },
            "mappings" => ServerSettings.Parse(["map.orders.*=shipping.$1", "map.req.*=svc.$1", "map.split=left@50|right@50"]),
            "imports" => WithRawConfig(ImportsConfig),
            "sysping" => SystemAccountSettings(),
            _ => new ServerSettings(),
        };
        await using var server = await TestServers.StartOursAsync(settings);
        var result = await NodeRunner.RunScenariosAsync(server.Url, scenario);
        Assert.True(result.ExitCode == 0, $"nats.js scenario '{scenario}' failed against the {server.Kind} server (exit {result.ExitCode}):\n{result.Output}");
    }

    private static ServerSettings WithRawConfig(string config)
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add(config);
        return settings;
    }

    private static ServerSettings SystemAccountSettings() => WithRawConfig(SystemAccount.SystemAccountDifferentialTests.Config);

    [Fact]
    public async Task Every_scenario_in_the_script_has_a_test_case()
    {
        var result = await NodeRunner.RunScenariosAsync("--list");
        Assert.Equal(0, result.ExitCode);
        var listed = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Equal(listed.Order(StringComparer.Ordinal), ScenarioNames.Concat(DrivenScenarioNames).Order(StringComparer.Ordinal));
    }
}
