using Nats.Server.Configuration;
using Nats.Server.Tests.Configuration;

namespace Nats.Server.Tests.Accounts;

/// <summary>
/// Account exports and imports checked against Go's "-t -c file": the same files accepted or refused,
/// and a refusal carries Go's reason (positions aside).
/// </summary>
public class ImportExportConfigDifferentialTests
{
    private const string AB = "A { users: [{user: a, password: a}], exports: EXPORTS }, B { users: [{user: b, password: b}], imports: IMPORTS }";

    private static string Accounts(string exports, string imports) =>
        "accounts { " + AB.Replace("EXPORTS", exports).Replace("IMPORTS", imports) + " }\n";

    public static TheoryData<string, string> Cases() => new()
    {
        { "stream-prefix", Accounts("[{stream: \"news.>\"}]", "[{stream: {account: A, subject: \"news.>\"}, prefix: \"a\"}]") },
        { "stream-to", Accounts("[{stream: \"news.*\"}]", "[{stream: {account: A, subject: \"news.*\"}, to: \"local.*\"}]") },
        { "stream-narrower", Accounts("[{stream: \"news.>\"}]", "[{stream: {account: A, subject: \"news.sport\"}}]") },
        { "stream-wider-refused", Accounts("[{stream: \"news.sport\"}]", "[{stream: {account: A, subject: \"news.>\"}}]") },
        { "stream-not-exported", Accounts("[{service: \"news.>\"}]", "[{stream: {account: A, subject: \"news.x\"}}]") },
        { "stream-approved", Accounts("[{stream: \"news.>\", accounts: [B]}]", "[{stream: {account: A, subject: \"news.x\"}}]") },
        { "stream-not-approved", "accounts { A { exports: [{stream: \"news.>\", accounts: [C]}] }, B { imports: [{stream: {account: A, subject: \"news.x\"}}] }, C {} }\n" },
        { "stream-empty-approval-list", Accounts("[{stream: \"news.>\", accounts: []}]", "[{stream: {account: A, subject: \"news.x\"}}]") },
        { "stream-approved-unknown-account", Accounts("[{stream: \"news.>\", accounts: [Z]}]", "[]") },
        { "service-approved-unknown-account", Accounts("[{service: \"svc.>\", accounts: [Z]}]", "[]") },
        { "stream-prefix-wildcard", Accounts("[{stream: \"news.>\"}]", "[{stream: {account: A, subject: \"news.x\"}, prefix: \"a.*\"}]") },
        { "stream-duplicate", Accounts("[{stream: \"news.>\"}]", "[{stream: {account: A, subject: \"news.x\"}}, {stream: {account: A, subject: \"news.x\"}, to: \"y\"}]") },
        { "stream-unknown-account", Accounts("[]", "[{stream: {account: Z, subject: \"news.x\"}}]") },
        { "stream-missing-subject", Accounts("[]", "[{stream: {account: A}}]") },
        { "stream-not-a-map", Accounts("[]", "[{stream: \"news\"}]") },
        { "stream-transform-unused-wildcard", Accounts("[{stream: \"news.>\"}]", "[{stream: {account: A, subject: \"news.*\"}, to: \"local\"}]") },
        { "stream-transform-extra-wildcard", Accounts("[{stream: \"news.>\"}]", "[{stream: {account: A, subject: \"news.*\"}, to: \"local.*.*\"}]") },
        { "service-to", Accounts("[{service: \"svc.>\"}]", "[{service: {account: A, subject: \"svc.>\"}, to: \"asvc.>\"}]") },
        { "service-literal", Accounts("[{service: \"svc.echo\"}]", "[{service: {account: A, subject: \"svc.echo\"}}]") },
        { "service-not-exported", Accounts("[{stream: \"svc.>\"}]", "[{service: {account: A, subject: \"svc.x\"}}]") },
        { "service-not-approved", "accounts { A { exports: [{service: \"svc.>\", accounts: [C]}] }, B { imports: [{service: {account: A, subject: \"svc.x\"}}] }, C {} }\n" },
        { "service-duplicate-local", Accounts("[{service: \"svc.>\"}]", "[{service: {account: A, subject: \"svc.x\"}, to: l}, {service: {account: A, subject: \"svc.y\"}, to: l}]") },
        { "service-invalid-subject", Accounts("[{service: \"svc.>\"}]", "[{service: {account: A, subject: \"svc..x\"}}]") },
        { "service-unknown-account", Accounts("[]", "[{service: {account: Z, subject: \"svc.x\"}}]") },
        { "service-transform-mismatch", Accounts("[{service: \"svc.>\"}]", "[{service: {account: A, subject: \"svc.*\"}, to: \"l\"}]") },
        { "service-share", Accounts("[{service: \"svc.>\"}]", "[{service: {account: A, subject: \"svc.x\"}, share: true}]") },
        { "response-types", Accounts("[{service: \"a\", response_type: singleton}, {service: \"b\", response: stream}, {service: \"c\", response_type: chunked, response_threshold: \"5s\"}]", "[]") },
        { "response-type-unknown", Accounts("[{service: \"a\", response_type: many}]", "[]") },
        { "response-on-stream", Accounts("[{stream: \"a\", response_type: stream}]", "[]") },
        { "response-threshold-bad", Accounts("[{service: \"a\", response_threshold: \"soon\"}]", "[]") },
        { "response-threshold-duplicate", Accounts("[{service: \"a\", threshold: \"1s\", response_time: \"2s\"}]", "[]") },
        { "stream-and-service", Accounts("[{stream: \"a\", service: \"b\"}]", "[]") },
        { "export-not-a-map", Accounts("[\"a\"]", "[]") },
        { "exports-not-a-list", Accounts("{stream: a}", "[]") },
        { "imports-not-a-list", Accounts("[]", "{stream: {account: A, subject: a}}") },
        { "export-unknown-field", Accounts("[{stream: \"a\", bogus: 1}]", "[]") },
        { "import-unknown-field", Accounts("[{stream: \"a\"}]", "[{stream: {account: A, subject: a}, bogus: 1}]") },
        { "account-token-position", Accounts("[{service: \"svc.*.x\", account_token_position: 2}]", "[{service: {account: A, subject: \"svc.B.x\"}}]") },
        { "account-token-position-other", Accounts("[{service: \"svc.*.x\", account_token_position: 2}]", "[{service: {account: A, subject: \"svc.C.x\"}}]") },
        { "account-token-position-bad", Accounts("[{stream: \"svc.x\", account_token_position: 2}]", "[]") },
        { "latency", Accounts("[{service: \"svc.>\", latency: {sampling: 50, subject: \"lat\"}}]", "[]") },
        { "latency-bad-sampling", Accounts("[{service: \"svc.>\", latency: {sampling: 500, subject: \"lat\"}}]", "[]") },
        { "latency-on-stream", Accounts("[{stream: \"s\", latency: \"lat\"}]", "[]") },
        { "stream-cycle", "accounts { A { exports: [{stream: \"x.>\"}], imports: [{stream: {account: B, subject: \"x.>\"}}] }, B { exports: [{stream: \"x.>\"}], imports: [{stream: {account: A, subject: \"x.>\"}}] } }\n" },
        { "service-cycle", "accounts { A { exports: [{service: \"x.>\"}], imports: [{service: {account: B, subject: \"x.>\"}}] }, B { exports: [{service: \"x.>\"}], imports: [{service: {account: A, subject: \"x.>\"}}] } }\n" },
    };

    // Not covered: prefix and to together. Go reports it only when its random map order reads "to"
    // after "stream" and "prefix", so it accepts the same file on some runs (we refuse it when the file has that order).

    // Go reads accounts and entry keys in random map order; in these which side reports the conflict varies.
    private static readonly HashSet<string> OrderDependent = ["stream-cycle", "service-cycle", "stream-and-service"];

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task AcceptanceAndReasonMatchGoServer(string name, string text)
    {
        using var dir = new TempDirectory();
        var file = dir.Write(name + ".conf", text);
        var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(file);
        var ourMessage = GoConfigCheck.OurRefusal(file);
        Assert.True(goAccepts == (ourMessage is null), $"{name}: Go accepts={goAccepts} ({goOutput}), ours: {ourMessage ?? "valid"}");
        if (!goAccepts && !OrderDependent.Contains(name))
        {
            Assert.Contains(GoConfigCheck.Reason(goOutput), ourMessage);
        }
    }
}
