using System.Globalization;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;

namespace Nats.Server.IntegrationTests.Differential;

/// <summary>
/// One raw client connection of a script. Everything the server sends is parsed as server-to-client
/// protocol (so MSG/HMSG payloads are never mistaken for commands) and appended to a transcript.
/// Server PINGs are answered with PONG and dropped unless the script keeps them.
/// </summary>
internal sealed partial class ScriptConnection : IAsyncDisposable
{
    public const string ClosedMarker = "[closed]";

    private static readonly TimeSpan ReadTimeout = TimeSpan.FromSeconds(10);

    private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
    private readonly bool _keepPings;
    private readonly bool _autoPong;
    private readonly byte[] _buffer = new byte[256 * 1024];
    private int _start;
    private int _end;
    private int _pongsExpected;
    private int _pongsSeen;

    public ScriptConnection(bool keepPings, bool autoPong)
    {
        _keepPings = keepPings;
        _autoPong = autoPong;
    }

    public List<string> Transcript { get; } = new();

    private string? _lastReply;

    [System.Text.RegularExpressions.GeneratedRegex(@"_R_\.[0-9A-Za-z]+\.[0-9A-Za-z.]+")]
    private static partial System.Text.RegularExpressions.Regex ServiceReply();

    public bool Closed { get; private set; }

    /// <summary>Connects and waits for the first thing the server says (its INFO).</summary>
    public async Task ConnectAsync(int port)
    {
        await _socket.ConnectAsync("127.0.0.1", port);
        await ReadOneAsync("INFO");
    }

    public async Task SendAsync(byte[] data, bool oneBytePerWrite)
    {
        if (Closed)
        {
            return;
        }

        // Explicit PINGs in script text are answered too; count them so a later sync waits for all PONGs.
        _pongsExpected += ExplicitPing().Matches(Encoding.Latin1.GetString(data)).Count;
        try
        {
            if (oneBytePerWrite)
            {
                for (var i = 0; i < data.Length; i++)
                {
                    await _socket.SendAsync(data.AsMemory(i, 1));
                }
            }
            else
            {
                await _socket.SendAsync(data);
            }
        }
        catch (SocketException)
        {
            // The server already closed us; the transcript shows it when the script next reads.
        }
    }

    /// <summary>
    /// Publishes <paramref name="payload"/> to the reply subject of the last message this connection
    /// received: service-import replies (<c>_R_.xxxxxx.yyyyyy</c>) are random, so a script cannot spell them.
    /// </summary>
    public async Task ReplyAsync(byte[] payload)
    {
        if (_lastReply is null)
        {
            Transcript.Add("[reply: no message with a reply subject received]");
            return;
        }
        var head = Encoding.ASCII.GetBytes($"PUB {_lastReply} {payload.Length}\r\n");
        await SendAsync([.. head, .. payload, .. "\r\n"u8.ToArray()], oneBytePerWrite: false);
    }

    /// <summary>PING, then read until every PONG owed has arrived: all earlier output precedes it.</summary>
    public async Task SyncAsync()
    {
        if (Closed)
        {
            return;
        }

        await SendAsync("PING\r\n"u8.ToArray(), oneBytePerWrite: false);
        while (!Closed && _pongsSeen < _pongsExpected)
        {
            if (!await ReadOneAsync("PONG"))
            {
                return;
            }
        }
    }

    /// <summary>Reads until the server closes the connection.</summary>
    public async Task ExpectClosedAsync()
    {
        while (!Closed)
        {
            if (!await ReadOneAsync("close"))
            {
                return;
            }
        }
    }

    public void CloseByClient()
    {
        if (!Closed)
        {
            Closed = true;
            _socket.Close();
        }
    }

    public ValueTask DisposeAsync()
    {
        _socket.Dispose();
        return ValueTask.CompletedTask;
    }

    /// <summary>Reads and records one server operation; false if the wait timed out.</summary>
    private async Task<bool> ReadOneAsync(string waitingFor)
    {
        using var cts = new CancellationTokenSource(ReadTimeout);
        try
        {
            var line = await ReadLineAsync(cts.Token);
            if (line is null)
            {
                return true;
            }

            await RecordAsync(line, cts.Token);
            return true;
        }
        catch (OperationCanceledException)
        {
            Transcript.Add($"[timeout after {ReadTimeout.TotalSeconds:0}s waiting for {waitingFor}]");

            // Stop using a stuck connection so one mistake costs one timeout, not one per later step.
            Closed = true;
            return false;
        }
    }

    private async Task RecordAsync(string line, CancellationToken ct)
    {
        if (line.StartsWith("MSG ", StringComparison.Ordinal) || line.StartsWith("HMSG ", StringComparison.Ordinal))
        {
            var last = line[(line.LastIndexOf(' ') + 1)..];
            if (!int.TryParse(last, NumberStyles.None, CultureInfo.InvariantCulture, out var size))
            {
                Transcript.Add("[unparsable] " + Escape(line));
                return;
            }

            var parts = line.Split(' ');
            // MSG subject sid [reply] size / HMSG subject sid [reply] hsize size
            var withReply = parts[0] == "MSG" ? parts.Length == 5 : parts.Length == 6;
            _lastReply = withReply ? parts[3] : null;
            line = ServiceReply().Replace(line, "_R_.<reply>");
            var payload = await ReadExactAsync(size + 2, ct);
            if (payload is null)
            {
                Transcript.Add(Escape(line) + " [payload cut by close]");
                return;
            }

            var tail = payload.AsSpan(size).SequenceEqual("\r\n"u8) ? string.Empty : " [no CRLF after payload]";
            Transcript.Add(Escape(line) + " | " + Escape(Encoding.Latin1.GetString(payload, 0, size)) + tail);
            return;
        }

        switch (line)
        {
            case "PING":
                if (_autoPong)
                {
                    await SendAsync("PONG\r\n"u8.ToArray(), oneBytePerWrite: false);
                }

                if (_keepPings)
                {
                    Transcript.Add("PING");
                }

                return;
            case "PONG":
                _pongsSeen++;
                Transcript.Add("PONG");
                return;
        }

        Transcript.Add(line.StartsWith("INFO ", StringComparison.Ordinal) ? InfoNormalizer.Normalize(line) : Escape(ServiceReply().Replace(line, "_R_.<reply>")));
    }

    /// <summary>Next line without its CRLF, or null at end of stream (recorded as closed).</summary>
    private async Task<string?> ReadLineAsync(CancellationToken ct)
    {
        while (true)
        {
            var nl = Array.IndexOf(_buffer, (byte)'\n', _start, _end - _start);
            if (nl >= 0)
            {
                var len = nl - _start;
                if (len > 0 && _buffer[nl - 1] == '\r')
                {
                    len--;
                }

                var line = Encoding.Latin1.GetString(_buffer, _start, len);
                if (len == nl - _start)
                {
                    line += "[LF without CR]";
                }

                _start = nl + 1;
                return line;
            }

            if (!await FillAsync(ct))
            {
                if (_end > _start)
                {
                    Transcript.Add("[partial line] " + Escape(Encoding.Latin1.GetString(_buffer, _start, _end - _start)));
                    _start = _end;
                }

                MarkClosed();
                return null;
            }
        }
    }

    private async Task<byte[]?> ReadExactAsync(int count, CancellationToken ct)
    {
        var result = new byte[count];
        var got = 0;
        while (got < count)
        {
            if (_end == _start && !await FillAsync(ct))
            {
                MarkClosed();
                return null;
            }

            var n = Math.Min(count - got, _end - _start);
            Array.Copy(_buffer, _start, result, got, n);
            _start += n;
            got += n;
        }

        return result;
    }

    private async Task<bool> FillAsync(CancellationToken ct)
    {
        if (_start > 0)
        {
            Array.Copy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        if (_end == _buffer.Length)
        {
            throw new InvalidOperationException("server line longer than the harness buffer");
        }

        try
        {
            var n = await _socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None, ct);
            _end += n;
            return n > 0;
        }
        catch (SocketException)
        {
            // A reset is a close too; whether a close arrives as FIN or RST depends on timing.
            return false;
        }
    }

    private void MarkClosed()
    {
        if (!Closed)
        {
            Closed = true;
            Transcript.Add(ClosedMarker);
        }
    }

    private static string Escape(string s)
    {
        var sb = new StringBuilder(s.Length);
        foreach (var c in s)
        {
            switch (c)
            {
                case '\r': sb.Append("\\r"); break;
                case '\n': sb.Append("\\n"); break;
                case '\t': sb.Append("\\t"); break;
                case '\\': sb.Append("\\\\"); break;
                default:
                    if (c < 0x20 || c >= 0x7f)
                    {
                        sb.Append(CultureInfo.InvariantCulture, $"\\x{(int)c:x2}");
                    }
                    else
                    {
                        sb.Append(c);
                    }

                    break;
            }
        }

        return sb.ToString();
    }

    [GeneratedRegex(@"(?im)^ping(?:[ \t][^\r\n]*)?\r?$")]
    private static partial Regex ExplicitPing();
}
