using Microsoft.Extensions.Logging;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    private readonly Dictionary<byte[], Subscription> _subscriptions = new(ByteKeyComparer.Instance);
    private readonly Lock _subscriptionsLock = new();
    private bool _headers;
    private bool _echo = true;
    private bool _connectReceived;

    public int SubscriptionCount
    {
        get
        {
            lock (_subscriptionsLock)
            {
                return _subscriptions.Count;
            }
        }
    }

    public bool ConnectReceived => _connectReceived;

    /// <summary>CONNECT {json} — mirrors processConnect in the Go server's client.go.</summary>
    private void ProcessConnect(ReadOnlySpan<byte> json)
    {
        // Like Go's clearAuthTimer at the top of processConnect: a slow credential check (bcrypt)
        // must not be overtaken by the authentication timeout.
        Volatile.Write(ref _authDeadlineTicks, 0);
        if (!_connect.TryApply(json))
        {
            _logger.LogError("{Client} - invalid CONNECT: not a valid JSON object", this);
            CloseConnection(ClosedReason.ProtocolViolation);
            return;
        }
        _connectReceived = true;
        _echo = _connect.Echo;
        _headers = !_options.NoHeaderSupport && _connect.Headers;

        if (!AuthenticateConnect() || _connect.NewAccount || !string.IsNullOrEmpty(_connect.Account))
        {
            _logger.LogError("{Client} - authentication error - User \"{User}\"", this, _connect.User);
            EnqueueProtocol(ErrorTexts.AuthorizationViolation);
            CloseConnection(ClosedReason.AuthenticationViolation);
            _server.SystemEvents?.AuthenticationFailed(this);
            return;
        }
        if (!BindAccount(AuthUser!.Account))
        {
            return;
        }
        ApplyAccountLimits();
        // Go sends the connect advisory from isClientAuthorized, before the remaining CONNECT checks.
        _server.SystemEvents?.ClientConnected(this);
        _awaitingAuth = false;
        _authDeadlineTicks = 0;

        if (_connect.Protocol is < 0 or > 1)
        {
            EnqueueProtocol(ErrorTexts.InvalidClientProtocol);
            CloseConnection(ClosedReason.BadClientProtocolVersion);
            return;
        }
        if (_connect.NoResponders && !_headers)
        {
            EnqueueProtocol(ErrorTexts.NoRespondersRequiresHeaders);
            CloseConnection(ClosedReason.NoRespondersRequiresHeaders);
            return;
        }
        // The first ping is re-armed from CONNECT, as the Go server does.
        ScheduleFirstPing(Environment.TickCount64);
        if (_connect.Verbose)
        {
            EnqueueProtocol("+OK\r\n"u8);
        }
    }

    /// <summary>SUB subject [queue] sid — mirrors processSubEx.</summary>
    private void ProcessSubscribe(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        var sid = buffer[command.Sid];
        if (!CheckSubscribePermission(buffer[command.Subject], command.HasQueue ? buffer[command.Queue] : default, command.HasQueue, sid))
        {
            return;
        }
        bool atLimit;
        bool exists;
        lock (_subscriptionsLock)
        {
            atLimit = _maxSubscriptions >= 0 && _subscriptions.Count >= _maxSubscriptions;
            exists = _subscriptions.GetAlternateLookup<ReadOnlySpan<byte>>().ContainsKey(sid);
        }
        if (atLimit)
        {
            _logger.LogError("{Client} - maximum subscriptions exceeded", this);
            EnqueueProtocol(ErrorTexts.MaxSubscriptionsExceeded);
            return;
        }
        if (!exists)
        {
            var subscription = new Subscription(
                this,
                buffer[command.Subject].ToArray(),
                command.HasQueue ? buffer[command.Queue].ToArray() : null,
                sid.ToArray());
            lock (_subscriptionsLock)
            {
                _subscriptions[subscription.Sid] = subscription;
            }
            if (!Account.SubList.Insert(subscription))
            {
                lock (_subscriptionsLock)
                {
                    _subscriptions.Remove(subscription.Sid);
                }
                EnqueueProtocol(ErrorTexts.InvalidSubject);
                return;
            }
            if (IsClosed)
            {
                // Lost a race with close: make sure nothing is left behind in the index.
                Account.SubList.Remove(subscription);
            }
        }
        if (_connect.Verbose)
        {
            EnqueueProtocol("+OK\r\n"u8);
        }
    }

    /// <summary>UNSUB sid [max] — mirrors processUnsub: a max not above what was delivered removes at once.</summary>
    private void ProcessUnsubscribe(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        var sid = buffer[command.Sid];
        Subscription? subscription;
        lock (_subscriptionsLock)
        {
            _subscriptions.GetAlternateLookup<ReadOnlySpan<byte>>().TryGetValue(sid, out subscription);
        }
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
                RemoveSubscription(subscription);
            }
        }
        if (_connect.Verbose)
        {
            EnqueueProtocol("+OK\r\n"u8);
        }
    }

    /// <summary>Takes a subscription out of this client and the index (UNSUB, auto-unsubscribe).</summary>
    internal void RemoveSubscription(Subscription subscription)
    {
        lock (_subscriptionsLock)
        {
            if (!_subscriptions.TryGetValue(subscription.Sid, out var current) || !ReferenceEquals(current, subscription))
            {
                return;
            }
            _subscriptions.Remove(subscription.Sid);
        }
        Account.SubList.Remove(subscription);
        Account.OnSubscriptionRemoved(subscription);
    }

    private void RemoveAllSubscriptions()
    {
        Subscription[] all;
        lock (_subscriptionsLock)
        {
            all = [.. _subscriptions.Values];
            _subscriptions.Clear();
        }
        KeepSubscriptionsAtClose(all);
        if (all.Length > 0)
        {
            Account.SubList.RemoveBatch(all);
            Account.OnSubscriptionsRemoved(all);
        }
    }

    internal List<Subscription> SnapshotSubscriptions()
    {
        lock (_subscriptionsLock)
        {
            return [.. _subscriptions.Values];
        }
    }
}
