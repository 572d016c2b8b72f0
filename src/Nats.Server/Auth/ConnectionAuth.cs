using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Auth;

/// <summary>
/// One connection's authentication and authorization state: the nonce it was challenged with, who it
/// authenticated as, and its permissions with the checks CONNECT, SUB, PUB, delivery and a reload
/// make. A violation is logged here and returned as Go's -ERR line; the connection decides what to do.
/// </summary>
internal sealed class ConnectionAuth
{
    private readonly ILogger _logger;
    private readonly object _client;

    // The first CONNECT's transport, for checking the same CONNECT again on a reload.
    private string _connectionType = ConnectionTypes.Standard;
    private System.Security.Cryptography.X509Certificates.X509Certificate2? _peerCertificate;

    /// <param name="logger">Where violations are logged.</param>
    /// <param name="client">Shown as the client in log lines (its ToString is Go's "ip:port - cid:N").</param>
    public ConnectionAuth(ILogger logger, object client)
    {
        _logger = logger;
        _client = client;
    }

    /// <summary>Null when the user has no permissions: the publish and delivery paths then pay one null check.</summary>
    public ClientPermissions? Permissions { get; private set; }

    /// <summary>The nonce sent in this client's INFO (nkey challenge), if any.</summary>
    public string? Nonce { get; set; }

    /// <summary>Who the client authenticated as (null before CONNECT).</summary>
    public AuthenticatedUser? User { get; private set; }

    /// <summary>
    /// Runs the authenticator for a CONNECT; false is an authorization violation. A second CONNECT
    /// re-authenticates and replaces the permissions, as RegisterUser does in Go.
    /// </summary>
    public bool Authenticate(IClientAuthenticator authenticator, in ClientAuthRequest request, ServerOptions options)
    {
        _connectionType = request.ConnectionType;
        _peerCertificate = request.PeerCertificate;
        var user = authenticator.Authenticate(request);
        if (user is null)
        {
            return false;
        }
        var connect = request.Connect;
        if (user.Method == AuthMethod.UserPassword && string.IsNullOrEmpty(connect.User))
        {
            // no_auth_user: Go writes the substituted name into the client's options, which is
            // what monitoring then reports as the authorized user.
            connect.User = user.Name;
            // As Go, keep the substituted password too: a reload authenticates this CONNECT again.
            connect.Pass = options.Users?.FirstOrDefault(u => u.Username == user.Name)?.Password;
        }
        SetUser(user);
        return true;
    }

    /// <summary>
    /// Authenticates the original CONNECT against a reloaded configuration; on success the new
    /// permissions replace the old ones. False (logged as Go does) means the client must get Go's
    /// authViolation and be closed.
    /// </summary>
    public bool Reauthenticate(IClientAuthenticator authenticator, ConnectOptions connect, string remoteIp, ServerOptions options)
    {
        if (!authenticator.AuthRequired)
        {
            // Go skips authentication entirely then, leaving the client's permissions as they were.
            return true;
        }
        var user = authenticator.Authenticate(new ClientAuthRequest(connect, Nonce, remoteIp, _connectionType) { Client = _client, PeerCertificate = _peerCertificate });
        if (user is null)
        {
            if (options.Nkeys is not null)
            {
                _logger.LogError("{Client} - authentication error - Nkey \"{Nkey}\"", _client, connect.Nkey);
            }
            else if (options.Users is not null)
            {
                _logger.LogError("{Client} - authentication error - User \"{User}\"", _client, connect.User);
            }
            else
            {
                _logger.LogError("{Client} - authentication error", _client);
            }
            return false;
        }
        SetUser(user);
        return true;
    }

    private void SetUser(AuthenticatedUser user)
    {
        User = user;
        Permissions = user.Permissions is null ? null : new ClientPermissions(user.Permissions);
    }

    /// <summary>
    /// Go's clientHasMovedToDifferentAccount: a client that authenticated with an nkey or a user name
    /// whose entry is gone from the new options, or now belongs to another account. With only a single
    /// configured user (no users list) Go finds no entry either, so such clients count as moved too.
    /// </summary>
    public bool HasMovedToDifferentAccount(ConnectOptions connect, ServerOptions options)
    {
        string? newAccount;
        var (nkeyName, userName) = (connect.Nkey, connect.User);
        if (User?.CalloutName is { Length: > 0 } calloutName)
        {
            // Go 2.10's auth callout replaces the connection's user name with the admitted user JWT's name and clears its nkey.
            (nkeyName, userName) = (null, calloutName);
        }
        if (!string.IsNullOrEmpty(nkeyName))
        {
            var nkey = options.Nkeys?.FirstOrDefault(n => n.Nkey == nkeyName);
            if (nkey is null)
            {
                return true;
            }
            newAccount = nkey.Account;
        }
        else if (!string.IsNullOrEmpty(userName))
        {
            var user = options.Users?.FirstOrDefault(u => u.Username == userName);
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
        var current = User?.Account ?? Accounts.Account.GlobalAccountName;
        return current != (string.IsNullOrEmpty(newAccount) ? Accounts.Account.GlobalAccountName : newAccount);
    }

    /// <summary>The credential Go reports as authorized_user (getRawAuthUser): nkey, user, or token.</summary>
    public static string? RawAuthUser(ConnectOptions connect) =>
        !string.IsNullOrEmpty(connect.Nkey) ? connect.Nkey
        : !string.IsNullOrEmpty(connect.User) ? connect.User
        : !string.IsNullOrEmpty(connect.AuthToken) ? connect.AuthToken
        : null;

    /// <summary>Go's pubAllowed check in processInboundClientMsg: null when allowed, else the violation to send (the connection stays).</summary>
    public byte[]? PublishViolation(ReadOnlySpan<byte> subject)
    {
        if (Permissions is not { } permissions || permissions.CanPublish(subject))
        {
            return null;
        }
        var quoted = GoQuote.Quote(subject);
        _logger.LogError("{Client} - Publish Violation - {User}, Subject {Subject}", _client, User?.Description, quoted);
        return Encoding.UTF8.GetBytes($"-ERR 'Permissions Violation for Publish to {quoted}'\r\n");
    }

    /// <summary>Go's canSubscribe check at the start of processSub: null when allowed, else the violation to send.</summary>
    public byte[]? SubscribeViolation(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, bool hasQueue, ReadOnlySpan<byte> sid)
    {
        if (Permissions is not { } permissions)
        {
            return null;
        }
        var subjectText = Encoding.UTF8.GetString(subject);
        var queueText = hasQueue ? Encoding.UTF8.GetString(queue) : null;
        if (permissions.CanSubscribe(subjectText, queueText))
        {
            return null;
        }
        var quotedSubject = GoQuote.Quote(subject);
        string error;
        if (hasQueue)
        {
            var quotedQueue = GoQuote.Quote(queue);
            error = $"-ERR 'Permissions Violation for Subscription to {quotedSubject} using queue {quotedQueue}'\r\n";
            _logger.LogError("{Client} - Subscription Violation - {User}, Subject {Subject}, Queue: {Queue}, SID {Sid}",
                _client, User?.Description, quotedSubject, quotedQueue, Encoding.UTF8.GetString(sid));
        }
        else
        {
            error = $"-ERR 'Permissions Violation for Subscription to {quotedSubject}'\r\n";
            _logger.LogError("{Client} - Subscription Violation - {User}, Subject {Subject}, SID {Sid}",
                _client, User?.Description, quotedSubject, Encoding.UTF8.GetString(sid));
        }
        return Encoding.UTF8.GetBytes(error);
    }

    /// <summary>
    /// Go's processSubsOnConfigReload for one existing subscription: null when the current permissions
    /// still allow it, else the violation to send after removing it.
    /// </summary>
    public byte[]? ExistingSubscriptionViolation(Subscription subscription, out string quotedSubject, out string quotedSid)
    {
        quotedSubject = quotedSid = "";
        if (Permissions is not { } permissions)
        {
            return null;
        }
        var subject = subscription.SubjectString;
        var queue = subscription.QueueString;
        if (permissions.CanSubscribe(subject, null) || (queue is not null && permissions.CanSubscribe(subject, queue)))
        {
            return null;
        }
        quotedSubject = GoQuote.Quote(subscription.Subject);
        quotedSid = GoQuote.Quote(subscription.Sid);
        return Encoding.UTF8.GetBytes($"-ERR 'Permissions Violation for Subscription to {quotedSubject} (sid {quotedSid})'\r\n");
    }
}
