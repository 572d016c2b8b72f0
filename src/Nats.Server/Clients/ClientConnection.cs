using System.Net;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

/// <summary>
/// One client connection, the coordinator of its parts: the read loop parses commands in place
/// (Read, Commands, Publish), a <see cref="Delivery.MessageRouter"/> routes what it publishes, an
/// <see cref="OutboundQueue"/> holds and writes what it receives, FlowControl pauses the read loop
/// behind full subscribers, and Timers run ping, auth timeout and write deadline. It is admitted by
/// <see cref="Hosting.ClientAdmission"/>.
/// </summary>
internal sealed partial class ClientConnection
{
    private readonly NatsServer _server;
    private readonly ClientTransport _transport;
    // Replaced by a configuration reload (ApplyReloadedOptions).
    private ServerOptions _options;
    private readonly ILogger _logger;
    private readonly ConnectOptions _connect = new();
    private readonly string _remoteAddress;

    public ClientConnection(NatsServer server, ClientTransport transport, ulong id, Account account, ILogger logger)
    {
        _server = server;
        _transport = transport;
        _outbound = new OutboundQueue(this, transport);
        _router = new Delivery.MessageRouter(this);
        _options = server.Options;
        _logger = logger;
        Id = id;
        Account = account;
        StartTime = DateTime.UtcNow;
        var now = Environment.TickCount64;
        _lastActivityTicks = now;
        var remote = transport.RemoteEndPoint as IPEndPoint;
        RemoteIp = remote?.Address.ToString() ?? "";
        RemotePort = remote?.Port ?? 0;
        _remoteAddress = remote is null ? "?" : $"{RemoteIp}:{RemotePort}";
        _trace = logger.IsEnabled(LogLevel.Trace);
        _awaitingAuth = server.AuthenticatorFor(transport).AuthRequired;
        _maxPayload = _options.MaxPayload;
        _resultCacheLookup = _resultCache.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    public ulong Id { get; }
    public Account Account { get; private set; }
    public DateTime StartTime { get; }
    public string RemoteIp { get; }
    public int RemotePort { get; }

    public string? Name => _connect.Name;
    public string? Lang => _connect.Lang;
    public string? Version => _connect.Version;

    /// <summary>Messages and bytes received from this client (owned by its read loop).</summary>
    public long InMsgs;
    public long InBytes;

    public override string ToString() => $"{_remoteAddress} - cid:{Id}";

    /// <summary>Sends INFO and runs both loops until the connection ends.</summary>
    public async Task RunAsync(byte[] info, bool overConnectionLimit)
    {
        EnqueueProtocol(info);
        SignalFlush();
        var writer = Task.Run(_outbound.RunWriteLoopAsync);
        if (overConnectionLimit)
        {
            // Go sends INFO first, then refuses the connection.
            EnqueueProtocol(ErrorTexts.MaxConnectionsExceeded);
            CloseConnection(ClosedReason.MaxConnectionsExceeded);
        }
        else
        {
            ScheduleFirstPing(Environment.TickCount64);
            if (_awaitingAuth)
            {
                _authDeadlineTicks = Environment.TickCount64 + (long)_options.AuthTimeout.TotalMilliseconds;
            }
            await ReadLoopAsync().ConfigureAwait(false);
        }
        await writer.ConfigureAwait(false);
    }

    private void Trace(string direction, ReadOnlySpan<byte> op, ReadOnlySpan<byte> args)
    {
        _logger.LogTrace("{Client} - {Direction} [{Op}{Space}{Args}]", this, direction, Encoding.UTF8.GetString(op),
            args.IsEmpty ? "" : " ", Encoding.UTF8.GetString(args));
    }
}
