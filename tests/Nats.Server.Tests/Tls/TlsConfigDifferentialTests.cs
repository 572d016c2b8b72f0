using Nats.Server.Tests.Configuration;

namespace Nats.Server.Tests.Tls;

/// <summary>
/// tls {} blocks checked by the Go server's "-t -c file" and by our loader: the same verdict, and for a
/// refusal Go's exact text and position. Only blocks with a single fault: Go walks the map in random order.
/// </summary>
public class TlsConfigDifferentialTests
{
    public static TheoryData<string, string> Cases() => new()
    {
        { "unknown-field", "tls {\n  foo: 1\n}\n" },
        { "verify-not-bool", "tls {\n  verify: \"yes\"\n}\n" },
        { "map-not-bool", "tls {\n  verify_and_map: 1\n}\n" },
        { "insecure-not-bool", "tls {\n  insecure: 2\n}\n" },
        { "cert-not-string", "tls {\n  cert_file: 5\n}\n" },
        { "key-not-string", "tls {\n  key_file: true\n}\n" },
        { "ca-not-string", "tls {\n  ca_file: 1\n}\n" },
        { "unknown-cipher", "tls {\n  cipher_suites: [\"TLS_NOPE\"]\n}\n" },
        { "empty-ciphers", "tls {\n  cipher_suites: []\n}\n" },
        { "unknown-curve", "tls {\n  curve_preferences: [\"CurveP999\"]\n}\n" },
        { "empty-curves", "tls {\n  curve_preferences: []\n}\n" },
        { "timeout-bad-duration", "tls {\n  timeout: \"abc\"\n}\n" },
        { "timeout-wrong-type", "tls {\n  timeout: true\n}\n" },
        { "rate-wrong-type", "tls {\n  connection_rate_limit: \"x\"\n}\n" },
        { "pinned-not-list", "tls {\n  pinned_certs: 5\n}\n" },
        { "pinned-bad-entry", "tls {\n  pinned_certs: [\"abc\"]\n}\n" },
        { "known-urls", "tls {\n  verify_cert_and_check_known_urls: true\n}\n" },
        { "cert-without-key", "tls {\n  cert_file: \"/nonexistent/cert.pem\"\n}\n" },
        { "key-without-cert", "tls {\n  key_file: \"/nonexistent/key.pem\"\n}\n" },
        { "missing-cert-file", "tls {\n  cert_file: \"/nonexistent/cert.pem\"\n  key_file: \"/nonexistent/key.pem\"\n}\n" },
        { "https-bad-listen", "https: \"a:b:c\"\n" },
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
}
