using System.Text.Json;
using Nats.Server.Configuration;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>
/// /accountz?acc=X with exports and imports: Go and ours read the same accounts block and must show
/// the same entries. Go lists map contents in random order, so entries are compared as sets; Go's
/// automatic imports of the system account's services are left out (we do not serve those), and
/// strings are compared by value (Go escapes '>' in JSON, we do not).
/// </summary>
public sealed class AccountzImportExportTests : IAsyncLifetime
{
    private const string Config = """
        accounts {
          A { users: [{user: a, password: a}], exports: [
            {stream: "news.>"}, {stream: "priv.*", accounts: [B]}, {stream: "tok.*", accounts: []},
            {service: "svc.>", response_type: stream, response_threshold: "5s", accounts: [B]},
            {service: "single"}, {service: "lat", latency: {sampling: 25, subject: "lat.results"}} ] }
          B { users: [{user: b, password: b}], imports: [
            {stream: {account: A, subject: "news.>"}, prefix: "a"},
            {stream: {account: A, subject: "priv.x"}, to: "px"},
            {service: {account: A, subject: "svc.>"}, to: "asvc.>"},
            {service: {account: A, subject: "single"}, share: true} ] }
        }
        """;

    private string _dir = null!;
    private MonitoredServer _go = null!;
    private MonitoredServer _ours = null!;

    public async Task InitializeAsync()
    {
        _dir = Directory.CreateTempSubdirectory("accountz-").FullName;
        var file = Path.Combine(_dir, "accounts.conf");
        await File.WriteAllTextAsync(file, Config);
        _go = await GoMonitoredServer.StartAsync(file);
        var options = CommandLineOptions.Parse(["-c", file]).BuildServerOptions(out _);
        options.Host = "127.0.0.1";
        options.Port = 0;
        options.HttpPort = -1;
        options.HttpHost = "127.0.0.1";
        _ours = await OurMonitoredServer.StartAsync(options);
    }

    public async Task DisposeAsync()
    {
        await _go.DisposeAsync();
        await _ours.DisposeAsync();
        Directory.Delete(_dir, recursive: true);
    }

    [Theory]
    [InlineData("A", "exports")]
    [InlineData("A", "imports")]
    [InlineData("B", "exports")]
    [InlineData("B", "imports")]
    public async Task ExportsAndImportsMatchGo(string account, string field)
    {
        var go = await Entries(_go, account, field);
        var ours = await Entries(_ours, account, field);
        Assert.Equal(go, ours);
    }

    [Fact]
    public async Task PendingServiceResponsesMatchGo()
    {
        var go = await PendingResponses(_go);
        var ours = await PendingResponses(_ours);
        Assert.True(go.SequenceEqual(ours), $"go: {string.Join(" | ", go)}\nours: {string.Join(" | ", ours)}");
    }

    /// <summary>
    /// One request with nobody answering in A (no mapping survives: nothing was delivered) and one that
    /// reached a responder (pending until answered); returns A's "responses" entries, keys normalised.
    /// </summary>
    private static async Task<List<string>> PendingResponses(MonitoredServer server)
    {
        using var requester = new System.Net.Sockets.TcpClient();
        await requester.ConnectAsync("127.0.0.1", server.ClientPort);
        var stream = requester.GetStream();
        await stream.WriteAsync("CONNECT {\"user\":\"b\",\"pass\":\"b\"}\r\nPUB asvc.x _INBOX.1 2\r\nhi\r\nPING\r\n"u8.ToArray());
        await ReadUntilAsync(stream, "PONG");
        var detail = (await server.GetJsonAsync("/accountz?acc=A")).GetProperty("account_detail");
        Assert.False(detail.TryGetProperty("responses", out _), $"{server.Kind}: {detail}");

        using var responder = new System.Net.Sockets.TcpClient();
        await responder.ConnectAsync("127.0.0.1", server.ClientPort);
        var responderStream = responder.GetStream();
        await responderStream.WriteAsync("CONNECT {\"user\":\"a\",\"pass\":\"a\"}\r\nSUB svc.> 1\r\nPING\r\n"u8.ToArray());
        await ReadUntilAsync(responderStream, "PONG");
        await stream.WriteAsync("PUB asvc.x _INBOX.2 2\r\nhi\r\nPING\r\n"u8.ToArray());
        await ReadUntilAsync(stream, "PONG");
        await ReadUntilAsync(responderStream, "hi");
        detail = (await server.GetJsonAsync("/accountz?acc=A")).GetProperty("account_detail");
        var entries = new List<string>();
        foreach (var pending in detail.GetProperty("responses").EnumerateObject())
        {
            Assert.Matches(@"^_R_\.[0-9A-Za-z]{6}\.[0-9A-Za-z]{6}$", pending.Name);
            Assert.Equal(pending.Name, pending.Value.GetProperty("subject").GetString());
            entries.Add(Canonical(pending.Value).Replace(pending.Name, "<reply>", StringComparison.Ordinal));
        }
        return entries;
    }

    private static async Task ReadUntilAsync(System.Net.Sockets.NetworkStream stream, string marker)
    {
        var seen = new System.Text.StringBuilder();
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        while (!seen.ToString().Contains(marker, StringComparison.Ordinal))
        {
            var n = await stream.ReadAsync(buffer, timeout.Token);
            Assert.True(n > 0, $"closed before {marker}: {seen}");
            seen.Append(System.Text.Encoding.ASCII.GetString(buffer, 0, n));
        }
    }

    internal static async Task<List<string>> Entries(MonitoredServer server, string account, string field)
    {
        var doc = await server.GetJsonAsync($"/accountz?acc={account}");
        var detail = doc.GetProperty("account_detail");
        if (!detail.TryGetProperty(field, out var list))
        {
            return [];
        }
        return list.EnumerateArray()
            .Select(Canonical)
            .Order(StringComparer.Ordinal)
            .ToList();
    }

    // Go escapes '>' as \u003e, we do not: the same JSON string either way.
    private static string Value(JsonElement value) => value.ValueKind == JsonValueKind.String ? $"\"{value.GetString()}\"" : value.GetRawText();

    /// <summary>Approved account lists come from a Go map: sorted here so only their contents count.</summary>
    private static string Canonical(JsonElement entry)
    {
        var parts = entry.EnumerateObject().Select(p => p.Name == "approved_accounts"
            ? $"{p.Name}={string.Join(",", p.Value.EnumerateArray().Select(v => v.GetString()).Order(StringComparer.Ordinal))}"
            : $"{p.Name}={Value(p.Value)}");
        return string.Join(";", parts);
    }
}
