using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

/// <summary>
/// What a configuration reload and lame duck mode do to a live client: new limits and trace level,
/// authentication again with the original CONNECT, new permissions (dropping subscriptions they no
/// longer allow), and async INFO updates. Called from the server, not from the client's read loop.
/// </summary>
internal sealed class ClientReload
{
    private readonly ClientConnection _client;
    private readonly NatsServer _server;
    private readonly ConnectionSettings _settings;
    private readonly ConnectionAuth _auth;
    private readonly ConnectOptions _connect;
    private readonly ConnectHandler _connectHandler;
    private readonly ProtocolWriter _protocol;
    private readonly ILogger _logger;

    public ClientReload(ClientConnection client, NatsServer server, ConnectionSettings settings, ConnectionAuth auth, ConnectOptions connect,
        ConnectHandler connectHandler, ProtocolWriter protocol, ILogger logger)
    {
        _connectHandler = connectHandler;
        _protocol = protocol;
        _client = client;
        _server = server;
        _settings = settings;
        _auth = auth;
        _connect = connect;
        _logger = logger;
    }

    /// <summary>Takes the reloaded options (limits, timers) and, with a logging change, the trace level.</summary>
    public void ApplyReloadedOptions(ServerOptions options, bool refreshTrace)
    {
        _settings.Options = options;
        if (_settings.ConnectReceived)
        {
            // The account's limits still cap the reloaded server limits.
            _connectHandler.ApplyAccountLimits();
        }
        else
        {
            Volatile.Write(ref _settings.MaxPayload, options.MaxPayload);
        }
        if (refreshTrace)
        {
            _settings.Trace = _logger.IsEnabled(LogLevel.Trace);
        }
    }

    /// <summary>Go's clientHasMovedToDifferentAccount (see <see cref="ConnectionAuth.HasMovedToDifferentAccount"/>).</summary>
    public bool HasMovedToDifferentAccount(ServerOptions options) => _auth.HasMovedToDifferentAccount(_connect, options);

    /// <summary>
    /// Authenticates the original CONNECT against the new configuration. On failure the client gets
    /// Go's authViolation (-ERR and "Authentication Failure") and false is returned; on success the
    /// new permissions replace the old ones.
    /// </summary>
    public bool ReauthorizeAfterReload(IClientAuthenticator authenticator, ServerOptions options)
    {
        if (_auth.Reauthenticate(authenticator, _connect, _client.RemoteIp, options))
        {
            return true;
        }
        _protocol.SendNow(ErrorTexts.AuthorizationViolation);
        _client.CloseConnection(ClosedReason.AuthenticationViolation);
        return false;
    }

    /// <summary>Go's processSubsOnConfigReload: subscriptions the new permissions refuse are removed and reported.</summary>
    public void RemoveUnauthorizedSubscriptions()
    {
        if (_auth.Permissions is null)
        {
            return;
        }
        foreach (var subscription in _client.SnapshotSubscriptions())
        {
            if (_auth.ExistingSubscriptionViolation(subscription, out var quotedSubject, out var quotedSid) is not { } violation)
            {
                continue;
            }
            _client.RemoveSubscription(subscription);
            _protocol.SendNow(violation);
            _server.LogRemovedSubscription(quotedSubject, quotedSid, _auth.User?.Description ?? "User \"\"");
        }
    }

    /// <summary>Go's maxConnExceeded, used when a reload lowers max_connections.</summary>
    public void CloseForMaxConnections()
    {
        _logger.LogError("{Client} - maximum connections exceeded", _client);
        _protocol.SendNow(ErrorTexts.MaxConnectionsExceeded);
        _client.CloseConnection(ClosedReason.MaxConnectionsExceeded);
    }

    /// <summary>
    /// Sends an async INFO (lame duck notice) if this client can take one: it asked for protocol 1 and
    /// has had its first PONG, like Go's sendAsyncInfoToClients. Returns whether it was sent.
    /// </summary>
    public bool TrySendAsyncInfo(byte[] info)
    {
        if (_client.IsClosed || _connect.Protocol < 1 || !_settings.FirstPongSent)
        {
            return false;
        }
        _protocol.SendNow(info);
        return true;
    }

    /// <summary>
    /// Go's per-client part of updateAccountClaimsWithRefresh: limits re-applied, then a user the new
    /// account JWT revokes (or whose bearer token it now refuses) is closed. Returns false when closed.
    /// </summary>
    public bool ApplyAccountClaims(Auth.Jwt.AccountJwt account)
    {
        _connectHandler.ApplyAccountLimits();
        if (_auth.User?.JwtClaims is not { } user || (account.Claims.Nats.Revocations is null && !account.DisallowBearer))
        {
            return true;
        }
        if (user.Nats.BearerToken && account.DisallowBearer)
        {
            _logger.LogError("{Client} - authentication error", _client);
            _protocol.SendNow(ErrorTexts.AuthorizationViolation);
            _client.CloseConnection(ClosedReason.AuthenticationViolation);
            return false;
        }
        if (account.IsUserRevoked(user.Subject, user.IssuedAt))
        {
            _protocol.SendNow("-ERR 'User Authentication Revoked'\r\n"u8);
            _client.CloseConnection(ClosedReason.Revocation);
            return false;
        }
        return true;
    }

    /// <summary>Go: a client whose signing key left the account, or whose scope changed, is closed without an error line.</summary>
    public void CloseIfSignerGone(Auth.Jwt.AccountJwt account, IReadOnlySet<string> alteredScopes)
    {
        if (_auth.User?.JwtClaims is not { } user || string.IsNullOrEmpty(user.Nats.IssuerAccount))
        {
            return;
        }
        if (alteredScopes.Contains(user.Issuer) || !account.HasIssuer(user.Issuer, out _))
        {
            _client.CloseConnection(ClosedReason.AuthenticationViolation);
        }
    }

    /// <summary>Go's maxAccountConnExceeded, when an account update lowers its connection limit.</summary>
    public void CloseForMaxAccountConnections()
    {
        _logger.LogError("{Client} - maximum account active connections exceeded", _client);
        _protocol.SendNow("-ERR 'maximum account active connections exceeded'\r\n"u8);
        _client.CloseConnection(ClosedReason.MaxAccountConnectionsExceeded);
    }

    /// <summary>Go's accountAuthExpired: the account's JWT expired or the account was deleted.</summary>
    public void CloseForAccountExpired()
    {
        _logger.LogDebug("{Client} - Account Authentication Expired", _client);
        _protocol.SendNow("-ERR 'Account Authentication Expired'\r\n"u8);
        _client.CloseConnection(ClosedReason.AuthenticationExpired);
    }
}
