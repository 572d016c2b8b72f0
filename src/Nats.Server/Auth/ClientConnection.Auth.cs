using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

/// <summary>
/// The client's side of authentication and authorization: the nonce it was challenged with, who it
/// authenticated as, and the permission checks called from CONNECT, SUB, PUB and delivery. Kept in
/// Auth/ so the hot-path files only carry one null check each.
/// </summary>
internal sealed partial class ClientConnection
{
    // Null when the user has no permissions: the publish and delivery paths then pay one null check.
    private ClientPermissions? _permissions;

    /// <summary>The nonce sent in this client's INFO (nkey challenge), if any.</summary>
    internal string? Nonce { get; set; }

    /// <summary>Who the client authenticated as (null before CONNECT).</summary>
    internal AuthenticatedUser? AuthUser { get; private set; }

    /// <summary>Runs the server's authenticator for this CONNECT; false is an authorization violation.</summary>
    private bool AuthenticateConnect()
    {
        var user = _server.AuthenticatorFor(_transport).Authenticate(new ClientAuthRequest(_connect, Nonce, RemoteIp, _transport.ConnectionType)
        {
            PeerCertificate = _transport.Tls?.PeerCertificate,
        });
        if (user is null)
        {
            return false;
        }
        AuthUser = user;
        if (user.Method == AuthMethod.UserPassword && string.IsNullOrEmpty(_connect.User))
        {
            // no_auth_user: Go writes the substituted name into the client's options, which is
            // what monitoring then reports as the authorized user.
            _connect.User = user.Name;
            // As Go, keep the substituted password too: a reload authenticates this CONNECT again.
            _connect.Pass = _server.Options.Users?.FirstOrDefault(u => u.Username == user.Name)?.Password;
        }
        // A second CONNECT re-authenticates and replaces the permissions, as RegisterUser does in Go.
        _permissions = user.Permissions is null ? null : new ClientPermissions(user.Permissions);
        return true;
    }

    private readonly Lock _accountGate = new();
    private bool _accountReleased;

    /// <summary>Leaves the account's connection count once, when the connection is gone.</summary>
    internal void ReleaseAccount()
    {
        lock (_accountGate)
        {
            if (!_accountReleased)
            {
                _accountReleased = true;
                Account.RemoveClient();
            }
        }
    }

    /// <summary>
    /// Go's registerWithAccount: moves the client from $G to the account it authenticated into; false
    /// (after sending the error and closing) when that account is at its connection limit.
    /// </summary>
    private bool BindAccount(string accountName)
    {
        var target = _server.FindAccount(accountName);
        if (target is null)
        {
            _logger.LogError("{Client} - Problem registering with account \"{Account}\": account missing", this, accountName);
            EnqueueProtocol("-ERR 'Failed Account Registration'\r\n"u8);
            CloseConnection(ClosedReason.MissingAccount);
            return false;
        }
        if (ReferenceEquals(target, Account))
        {
            return true;
        }
        bool joined;
        lock (_accountGate)
        {
            if (_accountReleased)
            {
                return false;
            }
            joined = target.TryAddClient();
            if (joined)
            {
                Account.RemoveClient();
                Account = target;
            }
        }
        if (!joined)
        {
            // Still counted in the old account, which the close path releases.
            _logger.LogError("{Client} - maximum account active connections exceeded", this);
            EnqueueProtocol("-ERR 'maximum account active connections exceeded'\r\n"u8);
            CloseConnection(ClosedReason.MaxAccountConnectionsExceeded);
            return false;
        }
        // The per-client match cache belongs to the old account's index.
        _resultCacheGeneration = -1;
        _resultCache.Clear();
        _server.SystemEvents?.ClientJoinedAccount(target);
        return true;
    }

    /// <summary>Go's pubAllowed check in processInboundClientMsg; sends the violation, keeps the connection.</summary>
    private bool CheckPublishPermission(ReadOnlySpan<byte> subject)
    {
        if (_permissions!.CanPublish(subject))
        {
            return true;
        }
        var quoted = GoQuote.Quote(subject);
        EnqueueProtocol(Encoding.UTF8.GetBytes($"-ERR 'Permissions Violation for Publish to {quoted}'\r\n"));
        _logger.LogError("{Client} - Publish Violation - {User}, Subject {Subject}", this, AuthUser?.Description, quoted);
        return false;
    }

    /// <summary>Go's canSubscribe check at the start of processSub.</summary>
    private bool CheckSubscribePermission(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, bool hasQueue, ReadOnlySpan<byte> sid)
    {
        if (_permissions is null)
        {
            return true;
        }
        var subjectText = Encoding.UTF8.GetString(subject);
        var queueText = hasQueue ? Encoding.UTF8.GetString(queue) : null;
        if (_permissions.CanSubscribe(subjectText, queueText))
        {
            return true;
        }
        var quotedSubject = GoQuote.Quote(subject);
        string error;
        if (hasQueue)
        {
            var quotedQueue = GoQuote.Quote(queue);
            error = $"-ERR 'Permissions Violation for Subscription to {quotedSubject} using queue {quotedQueue}'\r\n";
            _logger.LogError("{Client} - Subscription Violation - {User}, Subject {Subject}, Queue: {Queue}, SID {Sid}",
                this, AuthUser?.Description, quotedSubject, quotedQueue, Encoding.UTF8.GetString(sid));
        }
        else
        {
            error = $"-ERR 'Permissions Violation for Subscription to {quotedSubject}'\r\n";
            _logger.LogError("{Client} - Subscription Violation - {User}, Subject {Subject}, SID {Sid}",
                this, AuthUser?.Description, quotedSubject, Encoding.UTF8.GetString(sid));
        }
        EnqueueProtocol(Encoding.UTF8.GetBytes(error));
        return false;
    }
}
