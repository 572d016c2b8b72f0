using System.Text.Json;
using Nats.Server.IntegrationTests.Core;

namespace Nats.Server.IntegrationTests.SystemAccount;

/// <summary>One MSG as received: the raw control line, its subject and the JSON body.</summary>
internal sealed record SysMessage(string Line, string Subject, string Body)
{
    public JsonElement Json
    {
        get
        {
            using var document = JsonDocument.Parse(Body);
            return document.RootElement.Clone();
        }
    }
}

/// <summary>A raw protocol client that reads MSGs one at a time (system events and $SYS replies are single-line JSON).</summary>
internal sealed class SysClient : IAsyncDisposable
{
    private readonly RawClient _raw;

    private SysClient(RawClient raw) => _raw = raw;

    public RawClient Raw => _raw;

    public static async Task<SysClient> ConnectAsync(int port, string? user, string? password, string extra = "")
    {
        var raw = await RawClient.ConnectAsync(port);
        var credentials = user is null ? "" : $",\"user\":\"{user}\",\"pass\":\"{password}\"";
        await raw.ConnectAndReadInfoAsync($"{{\"verbose\":false,\"pedantic\":false,\"headers\":true,\"lang\":\"test\",\"version\":\"1.0\"{credentials}{extra}}}");
        await raw.SyncAsync();
        return new SysClient(raw);
    }

    public Task SendAsync(string text) => _raw.SendAsync(text);

    public Task<string> SyncAsync() => _raw.SyncAsync();

    /// <summary>Sends a request and returns the first MSG (its reply) on the inbox subscribed for it.</summary>
    public async Task<SysMessage> RequestAsync(string subject, string body = "", string inbox = "_INBOX.req")
    {
        await _raw.SendAsync($"SUB {inbox} 99\r\nPUB {subject} {inbox} {System.Text.Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");
        var message = await ReadMessageAsync();
        await _raw.SendAsync("UNSUB 99\r\n");
        return message;
    }

    /// <summary>Reads the next MSG, skipping PONGs and answering server PINGs.</summary>
    public async Task<SysMessage> ReadMessageAsync(TimeSpan? timeout = null)
    {
        while (true)
        {
            var line = (await _raw.ReadUntilAsync("\r\n", timeout))[..^2];
            if (line == "PING")
            {
                await _raw.SendAsync("PONG\r\n");
                continue;
            }
            if (!line.StartsWith("MSG ", StringComparison.Ordinal))
            {
                Assert.True(line is "PONG" or "+OK", $"unexpected line while waiting for a MSG: {line}");
                continue;
            }
            var body = (await _raw.ReadUntilAsync("\r\n", timeout))[..^2];
            return new SysMessage(line, line.Split(' ')[1], body);
        }
    }

    public ValueTask DisposeAsync() => _raw.DisposeAsync();
}
