using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;
using NATS.NKeys;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// nats-server 2.10's auth callout (Go's processClientOrLeafCallout), in server configuration mode and
/// in operator mode: the client is described in an authorization request JWT published to
/// <c>$SYS.REQ.USER.AUTH</c> in the callout account (sealed for the service's xkey when one is set);
/// the service's answer, an authorization response JWT, carries the user JWT that decides the client's
/// account and permissions, or an error. No answer within the auth timeout refuses the client. The wait
/// blocks that client's CONNECT handling only, as Go's client goroutine waits.
/// </summary>
internal sealed class AuthCallout
{
    public const string Subject = "$SYS.REQ.USER.AUTH";
    private const string XKeyHeader = "Nats-Server-Xkey";

    private readonly NatsServer _server;
    private readonly KeyPair _serverKey;
    private readonly KeyPair _xkey = KeyPair.CreatePair(PrefixByte.Curve);
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<string, TaskCompletionSource<byte[]>> _pending = new(StringComparer.Ordinal);
    private readonly Lock _gate = new();
    private readonly Dictionary<string, ClientConnection> _replyClients = new(StringComparer.Ordinal);
    private readonly string _inbox = "$SYS._INBOX_." + Guid.NewGuid().ToString("N")[..12];
    private Delivery.InternalPublisher? _publisher;
    private long _next;

    public AuthCallout(NatsServer server, KeyPair serverKey, ILogger logger)
    {
        _server = server;
        _serverKey = serverKey;
        _logger = logger;
    }

    /// <summary>Go's getRawAuthUser for server configuration mode: who the auth_users list is matched against.</summary>
    public static string RawAuthUser(Protocol.ConnectOptions connect) =>
        !string.IsNullOrEmpty(connect.Nkey) ? connect.Nkey
        : !string.IsNullOrEmpty(connect.User) ? connect.User
        : !string.IsNullOrEmpty(connect.AuthToken) ? connect.AuthToken
        : "";

    /// <summary>
    /// Asks the callout service; the user it admits, or null (the reason is logged as Go's warning).
    /// <paramref name="rawUser"/> is the client_info user of the request (Go's getRawAuthUser).
    /// </summary>
    public AuthenticatedUser? Authorize(in ClientAuthRequest request, CalloutScope scope, string rawUser)
    {
        var account = scope.Account;
        var userKey = KeyPair.CreatePair(PrefixByte.User);
        var userNkey = userKey.GetPublicKey();
        var token = Interlocked.Increment(ref _next).ToString(CultureInfo.InvariantCulture);
        var reply = _inbox + "." + token;
        var response = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        _pending[token] = response;
        try
        {
            var timeout = _server.Options.AuthTimeout;
            var client = request.Client as ClientConnection;
            var xkey = scope.XKey is null ? null : _xkey;
            var jwt = AuthCalloutRequest.Encode(_serverKey, scope.Issuer, userNkey,
                new AuthCalloutRequest.ServerIdentity(_server.ServerName, _server.Options.Host, _server.ServerId, ServerVersion.ProtocolVersion, xkey?.GetPublicKey()),
                new AuthCalloutRequest.ClientIdentity(request.RemoteIp, client?.Id ?? 0, rawUser, "Client", ClientType(request.ConnectionType)),
                request.Connect, request.Nonce, timeout);
            var payload = Encoding.ASCII.GetBytes(jwt);
            var headers = ReadOnlySpan<byte>.Empty;
            if (xkey is not null)
            {
                payload = xkey.Seal(payload, scope.XKey!);
                headers = Encoding.ASCII.GetBytes($"NATS/1.0\r\n{XKeyHeader}: {xkey.GetPublicKey()}\r\n\r\n");
            }
            Send(account, reply, headers, payload);
            if (!response.Task.Wait(timeout))
            {
                _logger.LogDebug("Authorization callout response not received in time on account \"{Account}\"", account.Name);
                return null;
            }
            var outcome = AuthCalloutResponse.Process(response.Task.Result, scope, userNkey, _server, xkey, request);
            if (outcome.Error is not null)
            {
                return Fail(outcome.Error);
            }
            if (outcome.OutsideConnectTimes)
            {
                _logger.LogError("{Client} - Outside connect times", request.Client);
            }
            return outcome.User;
        }
        finally
        {
            _pending.TryRemove(token, out _);
        }
    }

    public AuthenticatedUser? Fail(string reason)
    {
        _logger.LogWarning("{Reason}", reason);
        return null;
    }

    private static string ClientType(string connectionType) => connectionType switch
    {
        ConnectionTypes.Websocket => "websocket",
        ConnectionTypes.Mqtt or ConnectionTypes.MqttWebsocket => "mqtt",
        _ => "nats",
    };

    /// <summary>Publishes the request; the reply subscription is made in each callout account on first use.</summary>
    private void Send(Account account, string reply, ReadOnlySpan<byte> headers, byte[] payload)
    {
        lock (_gate)
        {
            // An account rebuilt by a claims update or reload is a new object: subscribe in it again.
            if (!_replyClients.TryGetValue(account.Name, out var client) || !ReferenceEquals(client.Account, account))
            {
                client = InternalClient.Create(_server, _server.NextClientId(), account, _logger);
                InternalClient.Subscribe(client, _inbox + ".*", "1", OnReply);
                _replyClients[account.Name] = client;
            }
            _publisher ??= _server.CreateInternalPublisher();
            _publisher.Publish(account, Encoding.ASCII.GetBytes(Subject), Encoding.ASCII.GetBytes(reply), headers, payload, replySet: false);
        }
    }

    private bool OnReply(Subscription subscription, Delivery.MessageOrigin publisher, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> body)
    {
        var dot = subject.LastIndexOf((byte)'.');
        var token = Encoding.ASCII.GetString(subject[(dot + 1)..]);
        if (_pending.TryGetValue(token, out var waiting))
        {
            waiting.TrySetResult(body.ToArray());
        }
        return true;
    }
}
