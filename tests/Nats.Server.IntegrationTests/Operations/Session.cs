using Nats.Server.IntegrationTests.Core;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>
/// A raw protocol client whose traffic is compared line by line between servers. Server PINGs are
/// left out: when they come depends on timers, not on the behaviour under test.
/// </summary>
internal sealed class Session : IAsyncDisposable
{
    private readonly RawClient _client;

    private Session(RawClient client, string info)
    {
        _client = client;
        Info = info;
    }

    /// <summary>The INFO line the server greeted this connection with.</summary>
    public string Info { get; }

    /// <summary>Connects, sends CONNECT and a PING, and waits for the PONG (so the client is fully registered).</summary>
    public static async Task<Session> OpenAsync(int port, string connectJson = "{\"verbose\":false}")
    {
        var client = await RawClient.ConnectAsync(port);
        var info = await client.ReadUntilAsync("\r\n");
        await client.SendAsync($"CONNECT {connectJson}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        return new Session(client, info.TrimEnd());
    }

    /// <summary>Like <see cref="OpenAsync"/>, with the CONNECT built from the nonce in INFO (nkey signatures).</summary>
    public static async Task<Session> OpenSignedAsync(int port, Func<string, string> connectJson)
    {
        var client = await RawClient.ConnectAsync(port);
        var info = await client.ReadUntilAsync("\r\n");
        using var doc = System.Text.Json.JsonDocument.Parse(info["INFO ".Length..]);
        var nonce = doc.RootElement.GetProperty("nonce").GetString()!;
        await client.SendAsync($"CONNECT {connectJson(nonce)}\r\nPING\r\n");
        await client.ReadUntilAsync("PONG\r\n");
        return new Session(client, info.TrimEnd());
    }

    /// <summary>Sends the commands and a PING; returns the lines that came back before the PONG.</summary>
    public async Task<List<string>> ExchangeAsync(string commands = "")
    {
        await _client.SendAsync(commands + "PING\r\n");
        var text = await _client.ReadUntilAsync("PONG\r\n");
        var lines = Lines(text);
        lines.RemoveAt(lines.Count - 1);
        return lines;
    }

    /// <summary>Sends without waiting for anything (for commands after which the server closes the connection).</summary>
    public Task SendAsync(string commands) => _client.SendAsync(commands);

    /// <summary>Reads until <paramref name="marker"/> arrives; returns the text up to and including it.</summary>
    public Task<string> ReadUntilAsync(string marker) => _client.ReadUntilAsync(marker);

    /// <summary>Reads until the server closes the connection; the last entry is "[closed]".</summary>
    public async Task<List<string>> ReadUntilClosedAsync(TimeSpan? timeout = null)
    {
        var lines = Lines(await _client.ReadToEndAsync(timeout ?? TimeSpan.FromSeconds(30)));
        lines.Add("[closed]");
        return lines;
    }

    public static List<string> Lines(string text) =>
        text.Split("\r\n", StringSplitOptions.RemoveEmptyEntries).Where(l => l != "PING").ToList();

    public ValueTask DisposeAsync() => _client.DisposeAsync();
}
