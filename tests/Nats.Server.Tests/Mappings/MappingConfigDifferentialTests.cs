using Nats.Server.Configuration;
using Nats.Server.Tests.Configuration;

namespace Nats.Server.Tests.Mappings;

/// <summary>
/// Mapping blocks checked by the Go server's "-t -c file" and by our loader: both must accept or reject,
/// and a rejection with a single error must carry Go's exact text, position included.
/// </summary>
public class MappingConfigDifferentialTests
{
    public static TheoryData<string, string> Cases() => new()
    {
        { "plain", "mappings { foo: bar }\n" },
        { "maps-alias", "maps { foo: bar }\n" },
        { "wildcards", "mappings {\n  \"a.*.*\": \"b.$2.$1\"\n  \"c.>\": \"d.>\"\n}\n" },
        { "functions", "mappings {\n  \"a.*.*\": \"b.{{wildcard(2)}}.{{partition(3,1)}}\"\n  \"s.*\": \"t.{{splitFromLeft(1,2)}}.{{sliceFromRight(1,3)}}.{{split(1,-)}}\"\n}\n" },
        { "weighted", "mappings {\n  \"w.>\": [{destination: \"x.>\", weight: 40%}, {destination: \"y.>\", weight: \"60%\"}]\n}\n" },
        { "weighted-single-map", "mappings {\n  \"p.*\": {destination: \"q.$1\", weight: 30}\n}\n" },
        { "weighted-cluster", "mappings {\n  \"p.*\": [{destination: \"q.$1\", weight: 30, cluster: east}]\n}\n" },
        { "weighted-empty-list", "mappings { foo: [] }\n" },
        { "loss", "mappings {\n  foo: { dest: foo, weight: 80% }\n  bar: { dest: bar, weight: 0% }\n}\n" },
        { "literal-source-with-function", "mappings { foo: \"bar.{{wildcard(1)}}\" }\n" },
        { "unused-wildcard", "mappings {\n  \"a.*.*\": \"b.$2\"\n}\n" },
        { "index-out-of-range", "mappings {\n  \"c.*\": \"b.{{wildcard(2)}}\"\n}\n" },
        { "unknown-function", "mappings {\n  \"a.*\": \"b.{{foo(1)}}\"\n}\n" },
        { "too-many-args", "mappings {\n  \"a.*\": \"b.{{wildcard(1,2)}}\"\n}\n" },
        { "not-enough-args", "mappings {\n  \"a.*\": \"b.{{partition(3)}}\"\n}\n" },
        { "bad-arg", "mappings {\n  \"a.*\": \"b.{{splitFromLeft(1,x)}}\"\n}\n" },
        { "split-space", "mappings {\n  \"a.*\": \"b.{{split(1,a b)}}\"\n}\n" },
        { "star-in-destination", "mappings {\n  \"a.*\": \"b.*\"\n}\n" },
        { "fwc-mismatch", "mappings {\n  \"a.>\": \"b\"\n}\n" },
        { "empty-destination", "mappings {\n  a: \"\"\n}\n" },
        { "empty-token-destination", "mappings {\n  a: \"b..c\"\n}\n" },
        { "whitespace-destination", "mappings {\n  a: \"b c\"\n}\n" },
        { "invalid-source", "mappings {\n  \"j..k\": x\n}\n" },
        { "weight-too-big", "mappings {\n  \"e.*\": [{destination: \"x.$1\", weight: 140}]\n}\n" },
        { "weight-negative-string", "mappings {\n  \"e.*\": [{destination: \"x.$1\", weight: \"-1%\"}]\n}\n" },
        { "weight-not-a-number", "mappings {\n  \"e.*\": [{destination: \"x.$1\", weight: \"abc\"}]\n}\n" },
        { "weight-float", "mappings {\n  \"e.*\": [{destination: \"x.$1\", weight: 0.5}]\n}\n" },
        { "missing-weight", "mappings {\n  \"f.*\": [{destination: \"x.$1\"}]\n}\n" },
        { "unknown-field", "mappings {\n  \"h.*\": {destination: \"x.$1\", weight: 50, foo: 1}\n}\n" },
        { "number-entry", "mappings {\n  \"i.*\": 5\n}\n" },
        { "total-over-100", "mappings {\n  \"w.>\": [{destination: \"x.>\", weight: 40%}, {destination: \"y.>\", weight: \"70%\"}]\n}\n" },
        { "total-over-100-unquoted", "mappings {\n  \"w.>\": [{destination: \"x.>\", weight: 40}, {destination: \"y.>\", weight: 70}]\n}\n" },
        { "duplicate-destination", "mappings {\n  \"w\": [{destination: x, weight: 40}, {destination: x, weight: 10}]\n}\n" },
        { "bad-map-destination", "mappings {\n  w: {destination: \"a b\", weight: 40}\n}\n" },
        { "non-string-destination", "mappings {\n  w: {destination: 5, weight: 40}\n}\n" },
        { "not-a-map", "mappings: 5\n" },
        { "not-a-map-list", "mappings: [a, b]\n" },
        { "unknown-key-needing-quotes", "m\"appings { foo: bar }\n" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task AgreesWithGoServer(string name, string text)
    {
        using var dir = new TempDirectory();
        var file = dir.Write(name + ".conf", text);

        var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(file);
        var ourMessage = GoConfigCheck.OurRefusal(file);
        Assert.True(goAccepts == (ourMessage is null), $"{name}: Go accepts={goAccepts} ({goOutput}), ours: {ourMessage ?? "valid"}");
        if (!goAccepts)
        {
            var goMessage = goOutput.StartsWith("nats-server: ", StringComparison.Ordinal) ? goOutput["nats-server: ".Length..] : goOutput;
            Assert.Equal(goMessage.TrimEnd('\n'), ourMessage!.TrimEnd('\n'));
        }
    }

    /// <summary>
    /// Randomly damaged mapping blocks (fixed seed: the same files every run): destinations, functions,
    /// weights and brackets broken in ways no hand-written case lists must be accepted or refused as Go does.
    /// </summary>
    [Fact]
    public async Task MutatedMappingConfigsMatchGoServer()
    {
        const string alphabet = "{}[]()=:;,#\"$ .-0123456789%*>abpwxyz_";
        var seeds = Cases().Select(row => (string)row[1]).Where(t => t.Contains('{')).ToList();
        var random = new Random(20261122);
        using var dir = new TempDirectory();
        var mismatches = new List<string>();
        for (var i = 0; i < 120; i++)
        {
            var text = GoConfigCheck.Mutate(random, seeds[random.Next(seeds.Count)], alphabet, 3);
            var file = dir.Write($"m{i}.conf", text);
            var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(file);
            var ours = GoConfigCheck.OurRefusal(file);
            if (goAccepts != (ours is null))
            {
                mismatches.Add($"Go={goAccepts} ({goOutput}) us={ours ?? "valid"}: {text.Replace("\n", "\\n")}");
            }
        }
        Assert.Empty(mismatches);
    }

}
