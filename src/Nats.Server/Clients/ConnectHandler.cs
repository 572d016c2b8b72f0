using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Auth;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

/// <summary>
/// A client's CONNECT (Go's processConnect): the options, authentication, the move into the account
/// it authenticated into and that account's limits, then the protocol checks; and the account-limited
/// INFO a protocol-1 client gets after its first PING. Runs on the client's read loop; the limits
/// are applied again by a reload.
/// </summary>
internal sealed class ConnectHandler
{
    private readonly ClientConnection _client;
    private readonly NatsServer _server;
    private readonly ClientTransport _transport;
    private readonly ConnectionSettings _settings;
    private readonly ConnectOptions _connect;
    private readonly ConnectionAuth _auth;
    private readonly AccountMembership _membership;
    private readonly PublishHandler _publish;
    private readonly PingTimer _ping;
    private readonly ProtocolWriter _protocol;
    private readonly ILogger _logger;

    public ConnectHandler(ClientConnection client, NatsServer server, ClientTransport transport, ConnectionSettings settings, ConnectOptions connect,
        ConnectionAuth auth, AccountMembership membership, PublishHandler publish, PingTimer ping, ProtocolWriter protocol, ILogger logger)
    {
        _client = client;
        _server = server;
        _transport = transport;
        _settings = settings;
        _connect = connect;
        _auth = auth;
        _membership = membership;
        _publish = publish;
        _ping = ping;
        _protocol = protocol;
        _logger = logger;
    }

    /// <summary>CONNECT {json} — mirrors processConnect in the Go server's client.go.</summary>
    public void Process(ReadOnlySpan<byte> json)
    {
        // Like Go's clearAuthTimer at the top of processConnect: a slow credential check (bcrypt)
        // must not be overtaken by the authentication timeout.
        Volatile.Write(ref _settings.AuthDeadlineTicks, 0);
        if (!_connect.TryApply(json))
        {
            _logger.LogError("{Client} - invalid CONNECT: not a valid JSON object", _client);
            _client.CloseConnection(ClosedReason.ProtocolViolation);
            return;
        }
        _settings.ApplyConnect(_connect);

        var request = new ClientAuthRequest(_connect, _auth.Nonce, _client.RemoteIp, _transport.ConnectionType)
        {
            PeerCertificate = _transport.Tls?.PeerCertificate,
            Client = _client,
        };
        if (!_auth.Authenticate(_server.AuthenticatorFor(_transport), request, _server.Options) || _connect.NewAccount || !string.IsNullOrEmpty(_connect.Account))
        {
            if (_server.Options.Operator.Enabled)
            {
                // Go's authViolation with trusted keys names no credential.
                _logger.LogError("{Client} - authentication error", _client);
            }
            else
            {
                _logger.LogError("{Client} - authentication error - User \"{User}\"", _client, _connect.User);
            }
            _protocol.Enqueue(ErrorTexts.AuthorizationViolation);
            _client.CloseConnection(ClosedReason.AuthenticationViolation);
            _server.SystemEvents?.AuthenticationFailed(_client);
            return;
        }
        if (!BindAccount(_auth.User!.Account))
        {
            return;
        }
        ApplyAccountLimits();
        if (_auth.User.ValidFor is { } validFor)
        {
            Volatile.Write(ref _settings.AuthExpiresTicks, Math.Max(1, Environment.TickCount64 + (long)validFor.TotalMilliseconds));
        }
        // Go sends the connect advisory from isClientAuthorized, before the remaining CONNECT checks.
        _server.SystemEvents?.ClientConnected(_client);
        _settings.AwaitingAuth = false;
        _settings.AuthDeadlineTicks = 0;

        if (_connect.Protocol is < 0 or > 1)
        {
            _protocol.Enqueue(ErrorTexts.InvalidClientProtocol);
            _client.CloseConnection(ClosedReason.BadClientProtocolVersion);
            return;
        }
        if (_connect.NoResponders && !_settings.Headers)
        {
            _protocol.Enqueue(ErrorTexts.NoRespondersRequiresHeaders);
            _client.CloseConnection(ClosedReason.NoRespondersRequiresHeaders);
            return;
        }
        // The first ping is re-armed from CONNECT, as the Go server does.
        _ping.ScheduleFirstPing(Environment.TickCount64, _settings.Options.PingInterval);
        if (_connect.Verbose)
        {
            _protocol.Enqueue("+OK\r\n"u8);
        }
    }

    /// <summary>
    /// Go's registerWithAccount: moves the client from $G to the account it authenticated into; false
    /// (after sending the error and closing) when that account is missing or at its connection limit.
    /// </summary>
    private bool BindAccount(string accountName)
    {
        var target = _server.FindAccount(accountName);
        if (target is null)
        {
            _logger.LogError("{Client} - Problem registering with account \"{Account}\": account missing", _client, accountName);
            _protocol.Enqueue("-ERR 'Failed Account Registration'\r\n"u8);
            _client.CloseConnection(ClosedReason.MissingAccount);
            return false;
        }
        switch (_membership.MoveTo(target))
        {
            case AccountMove.AlreadyThere:
                return true;
            case AccountMove.Released:
                return false;
            case AccountMove.TargetFull:
                // Still counted in the old account, which the close path releases.
                _logger.LogError("{Client} - maximum account active connections exceeded", _client);
                _protocol.Enqueue("-ERR 'maximum account active connections exceeded'\r\n"u8);
                _client.CloseConnection(ClosedReason.MaxAccountConnectionsExceeded);
                return false;
        }
        // The per-client match cache belongs to the old account's index.
        _publish.OnAccountChanged();
        _server.SystemEvents?.ClientJoinedAccount(target);
        return true;
    }

    /// <summary>The smaller of the server's and the account's limits apply (see <see cref="ClientLimits"/>).</summary>
    public void ApplyAccountLimits()
    {
        var user = _auth.User;
        var limits = ClientLimits.Compute(_client.Account.Options.Limits, _settings.Options, user?.MaxPayload ?? AccountLimits.NoLimit, user?.MaxSubscriptions ?? AccountLimits.NoLimit);
        if (limits.ServerOverridesPayload)
        {
            _logger.LogError("{Client} - Max Payload set to {Max} from server overrides account or user config", _client, _settings.Options.MaxPayload);
        }
        if (limits.ServerOverridesSubscriptions)
        {
            _logger.LogError("{Client} - Max Subscriptions set to {Max} from server overrides account or user config", _client, _settings.Options.MaxSubscriptions);
        }
        _settings.ApplyLimits(limits);
    }

    /// <summary>
    /// Go's processPing: a client speaking protocol 1 that sends its first PING after CONNECT gets a
    /// fresh INFO (right after that PONG, as Go writes it) when its max_payload differs from the server's (an account limit lowered it).
    /// </summary>
    public void CheckInfoOnFirstPing()
    {
        if (_settings.FirstPongNeedsInfo(_connect.Protocol))
        {
            _protocol.Enqueue(_server.RenderClientInfo(_client.Id, _client.RemoteIp, _settings.MaxPayload));
        }
    }
}
