using System.Buffers;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    private const int InitialReadBufferSize = 16 * 1024;
    private const int MaxReadBufferSize = 256 * 1024;

    private async Task ReadLoopAsync()
    {
        var buffer = ArrayPool<byte>.Shared.Rent(InitialReadBufferSize);
        var filled = 0;
        try
        {
            while (!IsClosed)
            {
                int received;
                try
                {
                    received = await _transport.ReceiveAsync(buffer.AsMemory(filled), CancellationToken.None).ConfigureAwait(false);
                }
                catch (Transport.TlsHandshakeFailedException e)
                {
                    CloseConnection(e.Throttled ? ClosedReason.MaxConnectionsExceeded : ClosedReason.TlsHandshakeError);
                    break;
                }
                catch (Exception ex) when (ex is SocketException or ObjectDisposedException or IOException)
                {
                    CloseConnection(ClosedReason.ReadError);
                    break;
                }
                if (received == 0)
                {
                    CloseConnection(ClosedReason.ClientClosed);
                    break;
                }
                _ping.NoteActivity(Environment.TickCount64);
                var readFilledBuffer = filled + received == buffer.Length;
                filled += received;

                if (_settings.AwaitingAuth)
                {
                    // Credential checks (bcrypt, ed25519) are slow: run them on the thread pool, not on
                    // the socket engine thread that serves every other connection.
                    await Task.Yield();
                }
                var consumed = ProcessBuffer(buffer.AsSpan(0, filled), out var needed);
                _flushBatch.FlushAll();
                while (_stalledOn.MustStall && !IsClosed)
                {
                    // A subscriber we fed is full: wait for it to drain, then parse the rest of the buffer.
                    await _stalledOn.WaitAllAsync().ConfigureAwait(false);
                    consumed += ProcessBuffer(buffer.AsSpan(consumed, filled - consumed), out needed);
                    _flushBatch.FlushAll();
                }
                if (IsClosed)
                {
                    break;
                }

                var remaining = filled - consumed;
                if (remaining > 0 && consumed > 0)
                {
                    Buffer.BlockCopy(buffer, consumed, buffer, 0, remaining);
                }
                filled = remaining;

                // Grow for a message bigger than the buffer, or for throughput when reads fill it;
                // go back to the normal size once an oversize message is through.
                var wanted = needed > buffer.Length ? needed
                    : readFilledBuffer && buffer.Length < MaxReadBufferSize ? buffer.Length * 2
                    : buffer.Length > MaxReadBufferSize && filled <= MaxReadBufferSize / 2 ? MaxReadBufferSize
                    : 0;
                if (readFilledBuffer)
                {
                    // A heavy producer: leave the socket engine's thread so its other connections keep flowing.
                    await Task.Yield();
                }
                if (wanted > 0)
                {
                    var resized = ArrayPool<byte>.Shared.Rent(wanted);
                    Buffer.BlockCopy(buffer, 0, resized, 0, filled);
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = resized;
                }
            }
        }
        catch (Exception ex)
        {
            _logger.LogError(ex, "{Client} - Unexpected error in read loop", this);
            CloseConnection(ClosedReason.ReadError);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Runs every complete command in the buffer; returns the bytes consumed.</summary>
    internal int ProcessBuffer(ReadOnlySpan<byte> buffer, out int needed)
    {
        // Answers that receivers collect per message (JetStream PubAcks) go out together at the end.
        using var batch = Delivery.ReadBatch.Open();
        var offset = 0;
        needed = 0;
        while (offset < buffer.Length && !IsClosed && !_stalledOn.MustStall)
        {
            var limits = _settings.ParserLimits;
            var slice = buffer[offset..];
            var status = ClientProtocolParser.TryParse(slice, limits, out var command, out var consumed, out var commandNeeds, out var error);
            if (status == ParseStatus.NeedMoreData)
            {
                needed = commandNeeds;
                break;
            }
            if (status == ParseStatus.Error)
            {
                HandleParseError(error, slice);
                break;
            }
            Dispatch(slice, command);
            offset += consumed;
        }
        return offset;
    }

    private void Dispatch(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        switch (command.Kind)
        {
            case CommandKind.Pub:
            case CommandKind.HPub:
                if (_settings.Trace)
                {
                    Trace("<<-", command.Kind == CommandKind.Pub ? "PUB"u8 : "HPUB"u8, buffer[command.ControlArgs]);
                }
                _publish.Process(buffer, command, _settings.Trace);
                break;
            case CommandKind.Sub:
                if (_settings.Trace)
                {
                    Trace("<<-", "SUB"u8, buffer[command.ControlArgs]);
                }
                ProcessSubscribe(buffer, command);
                break;
            case CommandKind.Unsub:
                if (_settings.Trace)
                {
                    Trace("<<-", "UNSUB"u8, buffer[command.ControlArgs]);
                }
                ProcessUnsubscribe(buffer, command);
                break;
            case CommandKind.Ping:
                if (_settings.Trace)
                {
                    Trace("<<-", "PING"u8, default);
                }
                _ping.OnPingReceived(Environment.TickCount64);
                EnqueueProtocol("PONG\r\n"u8);
                // Marks the first PONG (lame duck INFO goes only to clients past it) and sends the
                // account-limited INFO if one is due.
                CheckInfoOnFirstPing();
                break;
            case CommandKind.Pong:
                if (_settings.Trace)
                {
                    Trace("<<-", "PONG"u8, default);
                }
                _ping.OnPong();
                break;
            case CommandKind.Connect:
                if (_settings.Trace)
                {
                    Trace("<<-", "CONNECT"u8, buffer[command.Argument]);
                }
                ProcessConnect(buffer[command.Argument]);
                _ping.EstimateRttAtConnect(StartTime);
                break;
            case CommandKind.Info:
                // Clients may send INFO; the Go server only checks that it is JSON.
                if (!IsJsonObject(buffer[command.Argument]))
                {
                    CloseConnection(ClosedReason.ProtocolViolation);
                }
                break;
            case CommandKind.Ok:
                break;
            case CommandKind.Err:
                _logger.LogError("{Client} - Client Error {Error}", this, System.Text.Encoding.UTF8.GetString(buffer[command.Argument]));
                CloseConnection(ClosedReason.ParseError);
                break;
        }
    }

    private void HandleParseError(ParseError error, ReadOnlySpan<byte> at)
    {
        switch (error)
        {
            case ParseError.UnknownOperation:
                _logger.LogError("{Client} - Client parser ERROR, proto='{Snippet}'", this, Snippet(at));
                EnqueueProtocol(ErrorTexts.UnknownProtocolOperation);
                CloseConnection(ClosedReason.ProtocolViolation);
                break;
            case ParseError.MaxControlLine:
                _logger.LogError("{Client} - maximum control line exceeded", this);
                EnqueueProtocol(ErrorTexts.MaxControlLineExceeded);
                CloseConnection(ClosedReason.MaxControlLineExceeded);
                break;
            case ParseError.MaxPayload:
                _logger.LogError("{Client} - maximum payload exceeded", this);
                EnqueueProtocol(ErrorTexts.MaxPayloadViolation);
                CloseConnection(ClosedReason.MaxPayloadExceeded);
                break;
            case ParseError.AuthorizationViolation:
                _logger.LogError("{Client} - authentication error", this);
                EnqueueProtocol(ErrorTexts.AuthorizationViolation);
                CloseConnection(ClosedReason.AuthenticationViolation);
                _server.SystemEvents?.AuthenticationFailed(this);
                break;
            default:
                _logger.LogError("{Client} - protocol violation, proto='{Snippet}'", this, Snippet(at));
                CloseConnection(ClosedReason.ProtocolViolation);
                break;
        }
    }

    private static string Snippet(ReadOnlySpan<byte> at) =>
        System.Text.Encoding.UTF8.GetString(at[..Math.Min(at.Length, 32)]).Replace("\r", "\\r").Replace("\n", "\\n");

    private static bool IsJsonObject(ReadOnlySpan<byte> json)
    {
        try
        {
            var reader = new System.Text.Json.Utf8JsonReader(json);
            if (!reader.Read() || reader.TokenType != System.Text.Json.JsonTokenType.StartObject)
            {
                return false;
            }
            reader.Skip();
            return !reader.Read();
        }
        catch (System.Text.Json.JsonException)
        {
            return false;
        }
    }
}
