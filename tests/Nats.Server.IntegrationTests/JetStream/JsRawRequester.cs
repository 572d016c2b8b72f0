using System.Text;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Core;

namespace Nats.Server.IntegrationTests.JetStream;

/// <summary>
/// Sends $JS.API requests and plain publishes over a raw connection and returns each answer as text
/// ("MSG|HMSG" + headers + payload), so the exact bytes of two servers can be compared. The answer is
/// awaited by its unique inbox (Go answers API requests from another goroutine, after a PONG would come).
/// </summary>
internal sealed partial class JsRawRequester : IAsyncDisposable
{
    private readonly RawClient _client;
    private int _next;

    private JsRawRequester(RawClient client) => _client = client;

    public static async Task<JsRawRequester> ConnectAsync(int port)
    {
        var client = await RawClient.ConnectAsync(port);
        await client.ConnectAndReadInfoAsync("{\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}");
        await client.SendAsync("SUB _INBOX.> 1\r\n");
        await client.SyncAsync();
        return new JsRawRequester(client);
    }

    /// <summary>Publishes and returns the reply; with <paramref name="headers"/> (lines without the NATS/1.0 prefix) as HPUB.</summary>
    public async Task<string> RequestAsync(string subject, string body, string? headers = null)
    {
        var inbox = $"_INBOX.{++_next}";
        if (headers is null)
        {
            await _client.SendAsync($"PUB {subject} {inbox} {Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");
        }
        else
        {
            var block = $"NATS/1.0\r\n{headers}\r\n\r\n";
            var h = Encoding.UTF8.GetByteCount(block);
            await _client.SendAsync($"HPUB {subject} {inbox} {h} {h + Encoding.UTF8.GetByteCount(body)}\r\n{block}{body}\r\n");
        }
        try
        {
            // Requests Go never answers (unknown API subjects) are part of the comparison too.
            await _client.ReadUntilAsync($" {inbox} ", TimeSpan.FromSeconds(3));
        }
        catch (Exception e) when (e is OperationCanceledException or System.Net.Sockets.SocketException)
        {
            return "[no answer]";
        }
        var rest = await _client.ReadUntilAsync("\r\n");
        var sizes = rest.Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (sizes.Length == 3)
        {
            // HMSG: sid, header size, total size.
            var header = await _client.ReadUntilAsync("\r\n\r\n");
            var payload = sizes[2] == sizes[1] ? "" : (await _client.ReadUntilAsync("\r\n"))[..^2];
            if (sizes[2] == sizes[1])
            {
                await _client.ReadUntilAsync("\r\n");
            }
            return "HMSG " + Normalise(header.Replace("\r\n", "|")) + Normalise(payload);
        }
        var text = await _client.ReadUntilAsync("\r\n");
        return Normalise(text[..^2]);
    }

    /// <summary>Publishes without a reply and waits until the server processed it (PING/PONG).</summary>
    public async Task PublishAsync(string subject, string body)
    {
        await _client.SendAsync($"PUB {subject} {Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");
        await _client.SyncAsync();
    }

    /// <summary>Times and ids differ between runs; everything else (key order, spacing, values) is compared.</summary>
    public static string Normalise(string text)
    {
        text = TimeValue().Replace(text, m => $"\"{m.Groups[1].Value}\":\"<time>\"");
        text = HeaderTime().Replace(text, "Nats-Time-Stamp: <time>");
        return IdValue().Replace(text, "\"id\":\"<id>\"");
    }

    public ValueTask DisposeAsync() => _client.DisposeAsync();

    [GeneratedRegex("\"(created|first_ts|last_ts|time|timestamp|opt_start_time)\":\"[^\"]*\"")]
    private static partial Regex TimeValue();

    [GeneratedRegex("Nats-Time-Stamp: [^|]*")]
    private static partial Regex HeaderTime();

    [GeneratedRegex("\"id\":\"[^\"]*\"")]
    private static partial Regex IdValue();
}
