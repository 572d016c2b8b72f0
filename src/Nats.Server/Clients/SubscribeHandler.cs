using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// A client's SUB and UNSUB (Go's processSubEx and processUnsub): subscribe permissions, the
/// subscription limit, and keeping <see cref="ClientSubscriptions"/> in step with the account's index.
/// Runs on the client's read loop only.
/// </summary>
internal sealed class SubscribeHandler
{
    private readonly ClientConnection _client;
    private readonly ConnectionSettings _settings;
    private readonly ConnectOptions _connect;
    private readonly ConnectionAuth _auth;
    private readonly ClientSubscriptions _subscriptions;
    private readonly OutboundQueue _outbound;
    private readonly ProtocolWriter _protocol;
    private readonly ILogger _logger;

    public SubscribeHandler(ClientConnection client, ConnectionSettings settings, ConnectOptions connect, ConnectionAuth auth,
        ClientSubscriptions subscriptions, OutboundQueue outbound, ProtocolWriter protocol, ILogger logger)
    {
        _protocol = protocol;
        _client = client;
        _settings = settings;
        _connect = connect;
        _auth = auth;
        _subscriptions = subscriptions;
        _outbound = outbound;
        _logger = logger;
    }

    /// <summary>SUB subject [queue] sid — mirrors processSubEx.</summary>
    public void Subscribe(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        var client = _client;
        var sid = buffer[command.Sid];
        if (_auth.SubscribeViolation(buffer[command.Subject], command.HasQueue ? buffer[command.Queue] : default, command.HasQueue, sid) is { } violation)
        {
            _protocol.Enqueue(violation);
            return;
        }
        var count = _subscriptions.CountAndFind(sid, out var exists);
        var max = _settings.MaxSubscriptions;
        if (max >= 0 && count >= max)
        {
            _logger.LogError("{Client} - maximum subscriptions exceeded", client);
            _protocol.Enqueue(ErrorTexts.MaxSubscriptionsExceeded);
            return;
        }
        if (!exists)
        {
            var subscription = new Subscription(
                client,
                buffer[command.Subject].ToArray(),
                command.HasQueue ? buffer[command.Queue].ToArray() : null,
                sid.ToArray());
            var subList = client.Account.SubList;
            if (!_subscriptions.Add(subscription, subList))
            {
                _protocol.Enqueue(ErrorTexts.InvalidSubject);
                return;
            }
            if (_outbound.IsClosed)
            {
                // Lost a race with close: make sure nothing is left behind in the index.
                subList.Remove(subscription);
            }
        }
        if (_connect.Verbose)
        {
            _protocol.Enqueue("+OK\r\n"u8);
        }
    }

    /// <summary>UNSUB sid [max] — mirrors processUnsub: a max not above what was delivered removes at once.</summary>
    public void Unsubscribe(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        var subscription = _subscriptions.Find(buffer[command.Sid]);
        if (subscription is not null)
        {
            var removeNow = true;
            lock (_outbound.Sync)
            {
                if (command.UnsubMax > 0 && command.UnsubMax > subscription.Delivered)
                {
                    subscription.Max = command.UnsubMax;
                    removeNow = false;
                }
                else
                {
                    subscription.Max = 0;
                }
            }
            if (removeNow)
            {
                _client.RemoveSubscription(subscription);
            }
        }
        if (_connect.Verbose)
        {
            _protocol.Enqueue("+OK\r\n"u8);
        }
    }
}
