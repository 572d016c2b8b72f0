using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

/// <summary>
/// What a configuration reload and lame duck mode do to a live client: new limits and trace level,
/// authentication again with the original CONNECT, new permissions (dropping subscriptions they no
/// longer allow), and async INFO updates. Called from the server, not from the client's read loop.
/// </summary>
internal sealed partial class ClientConnection
{
    // Set once the client has had its first PONG after CONNECT (Go's firstPongSent): from then on it
    // may be sent async INFO updates, if it declared protocol 1.
    private volatile bool _firstPongSent;

    /// <summary>Takes the reloaded options (limits, timers) and, with a logging change, the trace level.</summary>
    internal void ApplyReloadedOptions(ServerOptions options, bool refreshTrace)
    {
        _options = options;
        if (_connectReceived)
        {
            // The account's limits still cap the reloaded server limits.
            ApplyAccountLimits();
        }
        else
        {
            Volatile.Write(ref _maxPayload, options.MaxPayload);
        }
        if (refreshTrace)
        {
            _trace = _logger.IsEnabled(LogLevel.Trace);
        }
    }

    /// <summary>Go's clientHasMovedToDifferentAccount (see <see cref="Auth.ConnectionAuth.HasMovedToDifferentAccount"/>).</summary>
    internal bool HasMovedToDifferentAccount(ServerOptions options) => _auth.HasMovedToDifferentAccount(_connect, options);

    /// <summary>
    /// Authenticates the original CONNECT against the new configuration. On failure the client gets
    /// Go's authViolation (-ERR and "Authentication Failure") and false is returned; on success the
    /// new permissions replace the old ones.
    /// </summary>
    internal bool ReauthorizeAfterReload(IClientAuthenticator authenticator, ServerOptions options)
    {
        if (_auth.Reauthenticate(authenticator, _connect, RemoteIp, options))
        {
            return true;
        }
        SendProtocolNow(ErrorTexts.AuthorizationViolation);
        CloseConnection(ClosedReason.AuthenticationViolation);
        return false;
    }

    /// <summary>Go's processSubsOnConfigReload: subscriptions the new permissions refuse are removed and reported.</summary>
    internal void RemoveUnauthorizedSubscriptions()
    {
        if (_auth.Permissions is null)
        {
            return;
        }
        foreach (var subscription in SnapshotSubscriptions())
        {
            if (_auth.ExistingSubscriptionViolation(subscription, out var quotedSubject, out var quotedSid) is not { } violation)
            {
                continue;
            }
            RemoveSubscription(subscription);
            SendProtocolNow(violation);
            _server.LogRemovedSubscription(quotedSubject, quotedSid, AuthUser?.Description ?? "User \"\"");
        }
    }

    /// <summary>Go's maxConnExceeded, used when a reload lowers max_connections.</summary>
    internal void CloseForMaxConnections()
    {
        _logger.LogError("{Client} - maximum connections exceeded", this);
        SendProtocolNow(ErrorTexts.MaxConnectionsExceeded);
        CloseConnection(ClosedReason.MaxConnectionsExceeded);
    }

    /// <summary>
    /// Sends an async INFO (lame duck notice) if this client can take one: it asked for protocol 1 and
    /// has had its first PONG, like Go's sendAsyncInfoToClients. Returns whether it was sent.
    /// </summary>
    internal bool TrySendAsyncInfo(byte[] info)
    {
        if (IsClosed || _connect.Protocol < 1 || !_firstPongSent)
        {
            return false;
        }
        SendProtocolNow(info);
        return true;
    }
}
