using System.Buffers.Text;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Accounts.System;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// The server's own client (Go's internal SYSTEM client): it holds the system account's handler
/// subscriptions and publishes events and replies through the same fan-out as a client PUB, so
/// subscribers see ordinary MSGs. Publishing is single-threaded (the system event loop owns it).
/// </summary>
internal sealed partial class ClientConnection
{
    internal static ClientConnection CreateInternal(NatsServer server, ulong id, Account account, ILogger logger)
    {
        var client = new ClientConnection(server, InternalTransport.Instance, id, account, logger);
        client._settings.MarkInternal(stallable: false);
        return client;
    }

    internal static ClientConnection CreateStallableInternal(NatsServer server, ulong id, Account account, ILogger logger)
    {
        var client = CreateInternal(server, id, account, logger);
        client._settings.MarkInternal(stallable: true);
        return client;
    }

    /// <summary>A subscriber this client fed is full: its publishing connection must await <see cref="WaitForStallsAsync"/> before reading on.</summary>
    internal bool StallPending => _stalledOn.MustStall;

    internal ValueTask WaitForStallsAsync() => _stalledOn.WaitAllAsync();

    /// <summary>Adds a subscription whose messages go to <paramref name="handler"/> instead of a socket.</summary>
    internal Subscription SubscribeInternal(string subject, string sid, InternalMessageHandler handler)
    {
        var subscription = new Subscription(this, Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid), new Delivery.HandlerReceiver(handler));
        if (!_subscriptions.Add(subscription, Account.SubList))
        {
            throw new ArgumentException($"invalid internal subscription subject {subject}", nameof(subject));
        }
        return subscription;
    }

    /// <summary>
    /// Adds a handler subscription to another account's index (Go gives each account an internal
    /// client for its system service imports); not tracked by sid, since sids repeat per account.
    /// </summary>
    internal Subscription SubscribeInAccount(Account account, string subject, string sid, InternalMessageHandler handler)
    {
        var subscription = new Subscription(this, Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid), new Delivery.HandlerReceiver(handler));
        if (!account.SubList.Insert(subscription))
        {
            throw new ArgumentException($"invalid internal subscription subject {subject}", nameof(subject));
        }
        return subscription;
    }

    /// <summary>
    /// Publishes into <paramref name="account"/> through the same routing as a client's PUB (queue
    /// groups, receivers, stream and service imports), with an optional header block, and flushes the
    /// receivers. Like Go's internal sender the reply is always "set" (possibly empty), which puts two
    /// spaces before the size in an MSG without reply; clients accept it and a differential test sees
    /// it. A response that Go routes back through a service import is written normally
    /// (<paramref name="replySet"/> false).
    /// </summary>
    internal bool PublishInternal(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> payload, bool replySet = true) =>
        PublishInternal(account, subject, reply, default, payload, replySet);

    /// <inheritdoc cref="PublishInternal(Account, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, bool)"/>
    internal bool PublishInternal(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload, bool replySet)
    {
        InMsgs++;
        InBytes += headers.Length + payload.Length;
        var delivered = _router.RouteInternal(account, subject, reply, headers, payload, replySet);
        _flushBatch.FlushAll();
        return delivered;
    }

    /// <summary>As <see cref="PublishInternal(Account, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, bool)"/>
    /// without flushing the receivers: a batch of publishes (a group commit round's PubAcks) ends with one
    /// <see cref="FlushInternalBatch"/>, so each receiving client gets one write for the batch.</summary>
    internal bool PublishInternalDeferred(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload)
    {
        InMsgs++;
        InBytes += headers.Length + payload.Length;
        return _router.RouteInternal(account, subject, reply, headers, payload, replySet: false);
    }

    /// <summary>Flushes every client that <see cref="PublishInternalDeferred"/> wrote to.</summary>
    internal void FlushInternalBatch() => _flushBatch.FlushAll();

    /// <summary>As <see cref="PublishInternal(Account, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, bool)"/>,
    /// routed by <paramref name="route"/> and shown as <paramref name="subject"/> (JetStream consumer delivery).</summary>
    internal bool PublishInternalRouted(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        InMsgs++;
        InBytes += headers.Length + payload.Length;
        var delivered = _router.RouteInternal(account, route, subject, reply, headers, payload, replySet: false);
        _flushBatch.FlushAll();
        return delivered;
    }

    /// <summary>As <see cref="PublishInternalRouted"/> without flushing: a consumer's batch of deliveries ends
    /// with one <see cref="FlushInternalBatch"/>, so the receiving client gets one write per batch.</summary>
    internal bool PublishInternalRoutedDeferred(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        InMsgs++;
        InBytes += headers.Length + payload.Length;
        return _router.RouteInternal(account, route, subject, reply, headers, payload, replySet: false);
    }
}
