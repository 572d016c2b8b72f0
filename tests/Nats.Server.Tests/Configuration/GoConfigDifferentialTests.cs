using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

/// <summary>
/// Runs the Go server's "-t -c file" on the same files and checks that it and we agree on
/// accept/reject. Keys we keep raw for later features (whose values Go validates deeply) are avoided.
/// </summary>
public class GoConfigDifferentialTests
{
    public static TheoryData<string, string> Cases() => new()
    {
        { "basic", "port: 4222\nhost: 127.0.0.1\n" },
        { "json", "{\n \"port\": 4222,\n \"http\": \"127.0.0.1:8222\"\n}\n" },
        { "sizes", "max_payload: 1MB\nmax_pending: 64MB\nmax_control_line: 4KB\n" },
        { "durations", "ping_interval: \"2m\"\nwrite_deadline: \"10s\"\n" },
        { "unquoted-2m-is-a-number", "ping_interval: 2m\n" },
        { "bad-duration", "ping_interval: \"2x\"\n" },
        { "unknown-key", "port: 4222\nfoo: 1\n" },
        { "variable-definition", "FOO: 4333\nport: $FOO\n" },
        { "missing-variable", "port: $NATS_DIFF_TEST_UNSET_VARIABLE\n" },
        { "authorization", "authorization {\n user: a\n password: b\n timeout: 2\n}\n" },
        { "user-and-token", "authorization { user: a, token: b }\n" },
        { "authorization-unknown", "authorization { foo: 1 }\n" },
        { "bcrypt", "authorization { user: a, password: $2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG }\n" },
        { "wrong-type", "port: \"abc\"\n" },
        { "block", "server_name: (\nabc\n)\n" },
        { "unterminated-block", "server_name: (\nabc\n" },
        { "listen", "listen: 127.0.0.1:4333\n" },
        { "listen-bad", "listen: \"abc\"\n" },
        { "number-before-bracket", "server_tags: [1, 2]\n" },
        { "semicolons", "port: 4222; debug: true; trace: false\n" },
        { "comments", "port: 4222 // x\n# y\n// z\n" },
        { "too-big", "max_payload: 4GB\n" },
        { "bad-escape", "server_name: \"a\\qb\"\n" },
        { "value-on-next-line", "port =\n4222\n" },
        { "key-then-value-on-next-line", "port\n4222\n" },
        { "crlf", "port: 4222\r\ndebug: true\r\n" },
        { "unsupported-but-known", "cluster { port: 6222 }\n" },
        { "partial-date", "x: 2020-01-01\n" },
        { "js-bool", "jetstream: true\n" },
        { "js-enabled-string", "jetstream: enabled\n" },
        { "js-bad-string", "jetstream: maybe\n" },
        { "js-bad-type", "jetstream: 5\n" },
        { "js-block", "jetstream {\n store_dir: \"/tmp/nats-diff-js\"\n max_memory_store: 1G\n max_file_store: \"10G\"\n domain: hub\n max_outstanding_catchup: 64MB\n}\n" },
        { "js-bad-size", "jetstream { max_file_store: \"10Q\" }\n" },
        { "js-unknown", "jetstream { bogus: 1 }\n" },
        { "js-duplicate-store-dir", "store_dir: \"/tmp/a\"\njetstream { store_dir: \"/tmp/b\" }\n" },
        { "js-account-limits", "jetstream: enabled\naccounts { A { jetstream { max_mem: 1G, max_file: 10G, max_streams: 10, max_consumers: 100, max_ack_pending: 1000 } } }\n" },
        { "js-account-bad-limit", "accounts { A { jetstream { max_streams: \"many\" } } }\n" },
        { "js-account-disabled", "accounts { A { jetstream: disabled } }\n" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task AcceptanceMatchesGoServer(string name, string text)
    {
        using var dir = new TempDirectory();
        string file = dir.Write(name + ".conf", text);

        bool goAccepts = (await GoConfigCheck.RunAsync(file)).Accepts;
        var ourMessage = GoConfigCheck.OurRefusal(file);
        var weAccept = ourMessage is null;
        Assert.True(goAccepts == weAccept, $"{name}: Go accepts={goAccepts}, we accept={weAccept} ({ourMessage ?? "valid"})");
    }

    /// <summary>
    /// Randomly damaged variants of the cases above (fixed seed, so the same files every run) probe the
    /// lexer's corners: stray brackets, quotes, separators and suffixes must be accepted or refused as Go does.
    /// </summary>
    [Fact]
    public async Task MutatedConfigsMatchGoServer()
    {
        const string alphabet = "{}[]()=:;,#/'\"\\$ \t\n\r.-0123456789kKmMbBiIaxyz_";
        var seeds = Cases().Select(row => (string)row[1]).Where(t => !t.Contains("jetstream")).ToList();
        var random = new Random(20261121);
        using var dir = new TempDirectory();
        var mismatches = new List<string>();
        for (int i = 0; i < 80; i++)
        {
            var text = GoConfigCheck.Mutate(random, seeds[random.Next(seeds.Count)], alphabet, 4);
            string file = dir.Write($"m{i}.conf", text);
            bool goAccepts = (await GoConfigCheck.RunAsync(file)).Accepts;
            var weAccept = GoConfigCheck.OurRefusal(file) is null;
            if (goAccepts != weAccept)
            {
                mismatches.Add($"Go={goAccepts} us={weAccept}: {text.Replace("\n", "\\n")}");
            }
        }
        Assert.Empty(mismatches);
    }

}
