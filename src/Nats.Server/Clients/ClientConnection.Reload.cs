using System.Text;
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

    /// <summary>Called from the read loop when a PING is answered.</summary>
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

    /// <summary>
    /// Go's clientHasMovedToDifferentAccount: a client that authenticated with an nkey or a user name
    /// whose entry is gone from the new options, or now belongs to another account. With only a single
    /// configured user (no users list) Go finds no entry either, so such clients count as moved too.
    /// </summary>
    internal bool HasMovedToDifferentAccount(ServerOptions options)
    {
        string? newAccount;
        if (!string.IsNullOrEmpty(_connect.Nkey))
        {
            var nkey = options.Nkeys?.FirstOrDefault(n => n.Nkey == _connect.Nkey);
            if (nkey is null)
            {
                return true;
            }
            newAccount = nkey.Account;
        }
        else if (!string.IsNullOrEmpty(_connect.User))
        {
            var user = options.Users?.FirstOrDefault(u => u.Username == _connect.User);
            if (user is null)
            {
                return true;
            }
            newAccount = user.Account;
        }
        else
        {
            return false;
        }
        var current = AuthUser?.Account ?? Accounts.Account.GlobalAccountName;
        return current != (string.IsNullOrEmpty(newAccount) ? Accounts.Account.GlobalAccountName : newAccount);
    }

    /// <summary>
    /// Authenticates the original CONNECT against the new configuration. On failure the client gets
    /// Go's authViolation (-ERR and "Authentication Failure") and false is returned; on success the
    /// new permissions replace the old ones.
    /// </summary>
    internal bool ReauthorizeAfterReload(IClientAuthenticator authenticator, ServerOptions options)
    {
        if (!authenticator.AuthRequired)
        {
            // Go skips authentication entirely then, leaving the client's permissions as they were.
            return true;
        }
        var user = authenticator.Authenticate(new ClientAuthRequest(_connect, Nonce, RemoteIp));
        if (user is null)
        {
            if (options.Nkeys is not null)
            {
                _logger.LogError("{Client} - authentication error - Nkey \"{Nkey}\"", this, _connect.Nkey);
            }
            else if (options.Users is not null)
            {
                _logger.LogError("{Client} - authentication error - User \"{User}\"", this, _connect.User);
            }
            else
            {
                _logger.LogError("{Client} - authentication error", this);
            }
            SendProtocolNow(ErrorTexts.AuthorizationViolation);
            CloseConnection(ClosedReason.AuthenticationViolation);
            return false;
        }
        AuthUser = user;
        _permissions = user.Permissions is null ? null : new ClientPermissions(user.Permissions);
        return true;
    }

    /// <summary>Go's processSubsOnConfigReload: subscriptions the new permissions refuse are removed and reported.</summary>
    internal void RemoveUnauthorizedSubscriptions()
    {
        var permissions = _permissions;
        if (permissions is null)
        {
            return;
        }
        foreach (var subscription in SnapshotSubscriptions())
        {
            var subject = subscription.SubjectString;
            var queue = subscription.QueueString;
            if (permissions.CanSubscribe(subject, null) || (queue is not null && permissions.CanSubscribe(subject, queue)))
            {
                continue;
            }
            RemoveSubscription(subscription);
            var quotedSubject = GoQuote.Quote(subscription.Subject);
            var quotedSid = GoQuote.Quote(subscription.Sid);
            SendProtocolNow(Encoding.UTF8.GetBytes($"-ERR 'Permissions Violation for Subscription to {quotedSubject} (sid {quotedSid})'\r\n"));
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
