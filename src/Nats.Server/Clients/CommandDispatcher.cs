using Microsoft.Extensions.Logging;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

/// <summary>
/// Parses a read buffer in place and hands each complete command to its handler (PUB to
/// <see cref="PublishHandler"/>, SUB/UNSUB to <see cref="SubscribeHandler"/>, CONNECT to
/// <see cref="ConnectHandler"/>, PING/PONG to the <see cref="PingTimer"/>); a parse error gets Go's -ERR and closes.
/// Runs on the client's read loop only.
/// </summary>
internal sealed class CommandDispatcher
{
    private readonly ClientConnection _client;
    private readonly NatsServer _server;
    private readonly ConnectionSettings _settings;
    private readonly PublishHandler _publish;
    private readonly SubscribeHandler _subscribe;
    private readonly ConnectHandler _connect;
    private readonly PingTimer _ping;
    private readonly OutboundQueue _outbound;
    private readonly StallList _stalledOn;
    private readonly ProtocolWriter _protocol;
    private readonly ILogger _logger;

    public CommandDispatcher(ClientConnection client, NatsServer server, ConnectionSettings settings, PublishHandler publish,
        SubscribeHandler subscribe, ConnectHandler connect, PingTimer ping, OutboundQueue outbound, StallList stalledOn, ProtocolWriter protocol, ILogger logger)
    {
        _protocol = protocol;
        _client = client;
        _server = server;
        _settings = settings;
        _publish = publish;
        _subscribe = subscribe;
        _connect = connect;
        _ping = ping;
        _outbound = outbound;
        _stalledOn = stalledOn;
        _logger = logger;
    }

    /// <summary>
    /// Runs every complete command in the buffer; returns the bytes consumed. Stops early when the
    /// connection closes or a subscriber it fed is full (the caller waits, then passes the rest);
    /// <paramref name="needed"/> is the size an incomplete command needs, if known.
    /// </summary>
    public int ProcessBuffer(ReadOnlySpan<byte> buffer, out int needed)
    {
        // Answers that receivers collect per message (JetStream PubAcks) go out together at the end.
        using var batch = _client.FlushBatch.Open();
        var settings = _settings;
        var offset = 0;
        needed = 0;
        while (offset < buffer.Length && !_outbound.IsClosed && !_stalledOn.MustStall)
        {
            var slice = buffer[offset..];
            var status = ClientProtocolParser.TryParse(slice, settings.ParserLimits, out var command, out var consumed, out var commandNeeds, out var error);
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
            Dispatch(slice, command, settings.Trace);
            offset += consumed;
        }
        return offset;
    }

    private void Dispatch(ReadOnlySpan<byte> buffer, in ClientCommand command, bool trace)
    {
        var client = _client;
        switch (command.Kind)
        {
            case CommandKind.Pub:
            case CommandKind.HPub:
                if (trace)
                {
                    client.Trace("<<-", command.Kind == CommandKind.Pub ? "PUB"u8 : "HPUB"u8, buffer[command.ControlArgs]);
                }
                _publish.Process(buffer, command, trace);
                break;
            case CommandKind.Sub:
                if (trace)
                {
                    client.Trace("<<-", "SUB"u8, buffer[command.ControlArgs]);
                }
                _subscribe.Subscribe(buffer, command);
                break;
            case CommandKind.Unsub:
                if (trace)
                {
                    client.Trace("<<-", "UNSUB"u8, buffer[command.ControlArgs]);
                }
                _subscribe.Unsubscribe(buffer, command);
                break;
            case CommandKind.Ping:
                if (trace)
                {
                    client.Trace("<<-", "PING"u8, default);
                }
                _ping.OnPingReceived(Environment.TickCount64);
                _protocol.Enqueue("PONG\r\n"u8);
                // Marks the first PONG (lame duck INFO goes only to clients past it) and sends the
                // account-limited INFO if one is due.
                _connect.CheckInfoOnFirstPing();
                break;
            case CommandKind.Pong:
                if (trace)
                {
                    client.Trace("<<-", "PONG"u8, default);
                }
                _ping.OnPong();
                break;
            case CommandKind.Connect:
                if (trace)
                {
                    client.Trace("<<-", "CONNECT"u8, buffer[command.Argument]);
                }
                _connect.Process(buffer[command.Argument]);
                _ping.EstimateRttAtConnect(client.StartTime);
                break;
            case CommandKind.Info:
                // Clients may send INFO; the Go server only checks that it is JSON.
                if (!IsJsonObject(buffer[command.Argument]))
                {
                    client.CloseConnection(ClosedReason.ProtocolViolation);
                }
                break;
            case CommandKind.Ok:
                break;
            case CommandKind.Err:
                _logger.LogError("{Client} - Client Error {Error}", client, System.Text.Encoding.UTF8.GetString(buffer[command.Argument]));
                client.CloseConnection(ClosedReason.ParseError);
                break;
        }
    }

    private void HandleParseError(ParseError error, ReadOnlySpan<byte> at)
    {
        var client = _client;
        switch (error)
        {
            case ParseError.UnknownOperation:
                _logger.LogError("{Client} - Client parser ERROR, proto='{Snippet}'", client, Snippet(at));
                _protocol.Enqueue(ErrorTexts.UnknownProtocolOperation);
                client.CloseConnection(ClosedReason.ProtocolViolation);
                break;
            case ParseError.MaxControlLine:
                _logger.LogError("{Client} - maximum control line exceeded", client);
                _protocol.Enqueue(ErrorTexts.MaxControlLineExceeded);
                client.CloseConnection(ClosedReason.MaxControlLineExceeded);
                break;
            case ParseError.MaxPayload:
                _logger.LogError("{Client} - maximum payload exceeded", client);
                _protocol.Enqueue(ErrorTexts.MaxPayloadViolation);
                client.CloseConnection(ClosedReason.MaxPayloadExceeded);
                break;
            case ParseError.AuthorizationViolation:
                _logger.LogError("{Client} - authentication error", client);
                _protocol.Enqueue(ErrorTexts.AuthorizationViolation);
                client.CloseConnection(ClosedReason.AuthenticationViolation);
                _server.SystemEvents?.AuthenticationFailed(client);
                break;
            default:
                _logger.LogError("{Client} - protocol violation, proto='{Snippet}'", client, Snippet(at));
                client.CloseConnection(ClosedReason.ProtocolViolation);
                break;
        }
    }

    private static string Snippet(ReadOnlySpan<byte> at) =>
        System.Text.Encoding.UTF8.GetString(at[..Math.Min(at.Length, 32)]).Replace("\r", "\\r").Replace("\n", "\\n");

    internal static bool IsJsonObject(ReadOnlySpan<byte> json)
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
