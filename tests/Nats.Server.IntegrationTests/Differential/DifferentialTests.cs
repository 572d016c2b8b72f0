using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Differential;

/// <summary>
/// Each script under Differential/Scripts is played to the Go reference server and to ours; the
/// normalised per-connection transcripts must be identical. Set NATS_DIFF_TARGET=go to run the
/// "ours" side as a second Go server (harness self-check), NATS_DIFF_DUMP=dir to keep the transcripts.
/// </summary>
public sealed class DifferentialTests
{
    public static TheoryData<string> Scripts()
    {
        var data = new TheoryData<string>();
        foreach (var file in Directory.GetFiles(RepoPaths.DifferentialScripts, "*.nats").Order(StringComparer.Ordinal))
        {
            data.Add(Path.GetFileNameWithoutExtension(file));
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Scripts))]
    public async Task Script_matches_go_server(string script)
    {
        var parsed = ProtocolScript.Load(Path.Combine(RepoPaths.DifferentialScripts, script + ".nats"));

        var (goServer, oursServer) = await TestServers.StartPairAsync(parsed.Server);
        await using var go = goServer;
        await using var ours = oursServer;

        var runs = await Task.WhenAll(ScriptRunner.RunAsync(parsed, go.Port), ScriptRunner.RunAsync(parsed, ours.Port));
        var expected = runs[0];
        var actual = runs[1];

        var dump = Environment.GetEnvironmentVariable("NATS_DIFF_DUMP");
        if (!string.IsNullOrEmpty(dump))
        {
            Directory.CreateDirectory(dump);
            await File.WriteAllTextAsync(Path.Combine(dump, script + ".go.txt"), expected.Render());
            await File.WriteAllTextAsync(Path.Combine(dump, script + "." + ours.Kind + "-target.txt"), actual.Render());
        }

        // A wait the Go server itself never satisfies is a broken script, not a match.
        var goTimeouts = expected.Entries.SelectMany(e => e.Lines).Where(l => l.StartsWith("[timeout", StringComparison.Ordinal));
        Assert.True(!goTimeouts.Any(), $"Script '{script}' timed out against the Go server itself:\n{expected.Render()}");

        var diff = Transcripts.Diff(expected, "go  ", actual, ours.Kind == "go" ? "go#2" : "ours");
        Assert.True(diff is null, $"Script '{script}' differs from the Go server:\n{diff}\nFull Go transcript:\n{expected.Render()}");
    }
}
