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
    private byte[] _internalScratch = new byte[1024];

    /// <summary>The server's own publisher: never stalled by flow control, shown to receivers as no origin client.</summary>
    private bool _isInternal;

    internal static ClientConnection CreateInternal(NatsServer server, ulong id, Account account, ILogger logger)
    {
        var client = new ClientConnection(server, InternalTransport.Instance, id, account, logger);
        client._awaitingAuth = false;
        client._connectReceived = true;
        client._isInternal = true;
        return client;
    }

    /// <summary>Adds a subscription whose messages go to <paramref name="handler"/> instead of a socket.</summary>
    internal Subscription SubscribeInternal(string subject, string sid, InternalMessageHandler handler)
    {
        var subscription = new Subscription(this, Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid), handler);
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
        var subscription = new Subscription(this, Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid), handler);
        if (!account.SubList.Insert(subscription))
        {
            throw new ArgumentException($"invalid internal subscription subject {subject}", nameof(subject));
        }
        return subscription;
    }

    /// <summary>
    /// Publishes <paramref name="payload"/> into <paramref name="account"/> and flushes the receivers.
    /// Like Go's internal sender the reply is always "set" (possibly empty), which puts two spaces
    /// before the size in an MSG without reply; clients accept it and a differential test sees it.
    /// A response that Go routes back through a service import is written normally (<paramref name="replySet"/> false).
    /// </summary>
    internal bool PublishInternal(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> payload, bool replySet = true)
    {
        var result = account.SubList.Match(subject);
        if (result.IsEmpty)
        {
            return false;
        }
        var lineLength = subject.Length + reply.Length + 32;
        var needed = lineLength + payload.Length + 2;
        if (_internalScratch.Length < needed)
        {
            _internalScratch = new byte[Math.Max(needed, _internalScratch.Length * 2)];
        }
        var span = _internalScratch.AsSpan();
        "MSG "u8.CopyTo(span);
        var position = 4;
        subject.CopyTo(span[position..]);
        position += subject.Length;
        span[position++] = (byte)' ';
        var prefixLength = position;
        if (replySet || !reply.IsEmpty)
        {
            span[position++] = (byte)' ';
            reply.CopyTo(span[position..]);
            position += reply.Length;
        }
        span[position++] = (byte)' ';
        Utf8Formatter.TryFormat(payload.Length, span[position..], out var written);
        position += written;
        span[position++] = (byte)'\r';
        span[position++] = (byte)'\n';
        var messageStart = position;
        payload.CopyTo(span[position..]);
        position += payload.Length;
        span[position++] = (byte)'\r';
        span[position++] = (byte)'\n';
        InMsgs++;
        InBytes += payload.Length;
        var delivered = FanOut(result, span[..prefixLength], span[prefixLength..messageStart], span[messageStart..position], -1, subject, reply);
        FlushPendingClients();
        return delivered;
    }
}
