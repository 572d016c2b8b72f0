using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Differential;

/// <summary>Checks the harness itself, so a Go-vs-Go pass cannot come from a harness that compares nothing.</summary>
public sealed class HarnessSelfTests
{
    [Fact]
    public void Parser_reads_steps_settings_and_repetition()
    {
        var s = ProtocolScript.Parse("t", new[]
        {
            "# comment",
            "server: user=a pass=b max_payload=16",
            "option: keep-pings",
            "unordered: A B",
            "conn A",
            "send A \"PUB x 3\\r\\n\" 3*\"z\" \"\\r\\n\\x41\"",
            "sync A",
            "expect-closed A",
        });
        Assert.Equal("a", s.Server.User);
        Assert.Equal(16, s.Server.MaxPayload);
        Assert.True(s.KeepPings);
        Assert.Single(s.UnorderedGroups);
        Assert.Equal([StepKind.Connect, StepKind.Send, StepKind.Sync, StepKind.ExpectClosed], s.Steps.Select(x => x.Kind));
        Assert.Equal("PUB x 3\r\nzzz\r\nA"u8.ToArray(), s.Steps[1].Payload);
    }

    [Fact]
    public void Parser_rejects_unknown_steps() =>
        Assert.Throws<FormatException>(() => ProtocolScript.Parse("t", new[] { "frobnicate A" }));

    [Fact]
    public void Diff_reports_a_changed_line()
    {
        var go = new Transcripts();
        go.Add("A", ["INFO {}", "-ERR 'Unknown Protocol Operation'", "[closed]"]);
        var ours = new Transcripts();
        ours.Add("A", ["INFO {}", "-ERR 'unknown protocol operation'", "[closed]"]);
        var diff = Transcripts.Diff(go, "go", ours, "ours");
        Assert.NotNull(diff);
        Assert.Contains("'unknown protocol operation'", diff);
        Assert.Null(Transcripts.Diff(go, "go", go, "go"));
    }

    [Fact]
    public void Fan_out_order_is_ignored_but_message_order_is_not()
    {
        var a = new Transcripts();
        a.Add("A", ["MSG x 2 1 | a", "MSG x 1 1 | a", "MSG x 1 1 | b"]);
        var b = new Transcripts();
        b.Add("A", ["MSG x 1 1 | a", "MSG x 2 1 | a", "MSG x 1 1 | b"]);
        Assert.Null(Transcripts.Diff(a, "a", b, "b"));

        var c = new Transcripts();
        c.Add("A", ["MSG x 1 1 | b", "MSG x 1 1 | a", "MSG x 2 1 | a"]);
        Assert.NotNull(Transcripts.Diff(a, "a", c, "c"));
    }

    [Fact]
    public void Info_volatile_fields_become_placeholders_and_keys_are_sorted()
    {
        var n = InfoNormalizer.Normalize("INFO {\"server_id\":\"NABC\",\"proto\":1,\"headers\":true,\"port\":4222}");
        Assert.Equal("INFO {\"headers\":true,\"port\":\"<port>\",\"proto\":1,\"server_id\":\"<server_id>\"}", n);
    }

    [Fact]
    public void Every_script_is_documented_and_parses()
    {
        var doc = File.ReadAllText(Path.Combine(RepoPaths.Root, "docs", "DIFFERENTIAL.md"));
        var files = Directory.GetFiles(RepoPaths.DifferentialScripts, "*.nats");
        Assert.True(files.Length >= 40, $"only {files.Length} scripts");
        foreach (var file in files)
        {
            var name = Path.GetFileNameWithoutExtension(file);
            Assert.True(doc.Contains($"| `{name}` |", StringComparison.Ordinal), $"script {name} is not listed in docs/DIFFERENTIAL.md");
            Assert.NotEmpty(ProtocolScript.Load(file).Steps);
        }
    }
}
