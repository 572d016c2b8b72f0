namespace Nats.Server.Tests.Configuration;

/// <summary>
/// Each file has at most one error, read through one of the kernel's getters in one of the blocks; Go's
/// "-t -c file" and ours must agree on acceptance and, when refusing, on the whole "file:line:col: reason".
/// </summary>
public class ConfigKernelDifferentialTests
{
    public static TheoryData<string, string> Cases() => new()
    {
        { "top-int-mismatch", "max_payload: \"1MB\"\n" },
        { "top-bool-mismatch", "debug: 1\n" },
        { "top-string-mismatch", "server_name: [a]\n" },
        { "top-too-big", "max_payload: 4GB\n" },
        { "top-duration-seconds", "write_deadline: 5\n" },
        { "top-duration-bad", "write_deadline: \"2x\"\n" },
        { "top-duration-string-only", "lame_duck_duration: 30\n" },
        { "top-listen-port", "listen: \"127.0.0.1:x\"\n" },
        { "top-listen-type", "listen: true\n" },
        { "auth-not-a-map", "authorization: 5\n" },
        { "auth-user-mismatch", "authorization { user: 1 }\n" },
        { "tls-not-a-map", "tls: 5\n" },
        { "tls-unknown", "tls { yy: 1 }\n" },
        { "tls-list-mismatch", "tls { cipher_suites: \"x\" }\n" },
        { "ws-listen-port-only", "websocket { listen: 4222, no_tls: true }\n" },
        { "ws-listen-bad-port", "websocket { listen: \"a:b\", no_tls: true }\n" },
        { "ws-listen-bad-address", "websocket { listen: \"abc\", no_tls: true }\n" },
        { "ws-port-mismatch", "websocket { port: \"x\", no_tls: true }\n" },
        { "ws-origins-element", "websocket { port: -1, no_tls: true, allowed_origins: [\"http://a\", true] }\n" },
        { "ws-origins-type", "websocket { port: -1, no_tls: true, allowed_origins: true }\n" },
        { "ws-unknown", "websocket { bogus: 1, no_tls: true }\n" },
        { "mqtt-listen-bad-port", "mqtt { listen: \"a:b\" }\n" },
        { "mqtt-ack-wait-seconds", "mqtt { ack_wait: 5 }\n" },
        { "mqtt-max-ack-pending", "mqtt { max_ack_pending: 70000 }\n" },
        { "mqtt-auth-mismatch", "mqtt { authorization { user: 1 } }\n" },
        { "mqtt-unknown", "mqtt { bogus: 1 }\n" },
        { "js-size-suffix", "jetstream { max_file_store: \"1MB\" }\n" },
        { "js-size-type", "jetstream { max_mem: true }\n" },
        { "js-account-bool-size", "accounts { A { jetstream { max_streams: true } } }\n" },
        { "accounts-list-mismatch", "accounts: [A, true]\n" },
        { "export-token-position", "accounts { A { exports: [ { stream: a, account_token_position: x } ] } }\n" },
        { "import-account-mismatch", "accounts { A { imports: [ { stream: { account: 1, subject: a } } ] } }\n" },
        { "account-limits-mismatch", "accounts { A { limits: { max_conn: \"x\" } } }\n" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task ErrorsAndPositionsMatchGoServer(string name, string text)
    {
        using var dir = new TempDirectory();
        var file = dir.Write(name + ".conf", text);
        var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(file);
        var ours = GoConfigCheck.OurRefusal(file);
        Assert.True(goAccepts == (ours is null), $"{name}: Go accepts={goAccepts} ({goOutput}), ours: {ours ?? "valid"}");
        if (!goAccepts)
        {
            var goFirst = goOutput.Trim().Split('\n')[0].Replace("nats-server: ", "", StringComparison.Ordinal);
            Assert.Equal(goFirst, ours!.Split('\n')[0]);
        }
    }
}
