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

    internal static ClientConnection CreateInternal(NatsServer server, ulong id, Account account, ILogger logger)
    {
        var client = new ClientConnection(server, InternalTransport.Instance, id, account, logger);
        client._awaitingAuth = false;
        client._connectReceived = true;
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
        => PublishInternal(account, subject, reply, default, payload, replySet);

    /// <summary>As above, with a header block (sent as HMSG; clients without headers get the payload only).</summary>
    internal bool PublishInternal(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload, bool replySet)
        => PublishInternalRouted(account, subject, subject, reply, headers, payload, replySet);

    /// <summary>
    /// Routes by <paramref name="route"/> but shows <paramref name="subject"/> to the receivers, as Go's
    /// JetStream delivers a stored message to a consumer's deliver subject or a pull request's inbox
    /// under the message's own subject.
    /// </summary>
    internal bool PublishInternalRouted(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, bool replySet)
    {
        var result = account.SubList.Match(route);
        if (result.IsEmpty)
        {
            return false;
        }
        var lineLength = subject.Length + reply.Length + 48;
        var needed = lineLength + headers.Length + payload.Length + 2;
        if (_internalScratch.Length < needed)
        {
            _internalScratch = new byte[Math.Max(needed, _internalScratch.Length * 2)];
        }
        var span = _internalScratch.AsSpan();
        var position = 0;
        if (headers.IsEmpty)
        {
            "MSG "u8.CopyTo(span);
            position = 4;
        }
        else
        {
            "HMSG "u8.CopyTo(span);
            position = 5;
        }
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
        int written;
        if (!headers.IsEmpty)
        {
            Utf8Formatter.TryFormat(headers.Length, span[position..], out written);
            position += written;
            span[position++] = (byte)' ';
        }
        Utf8Formatter.TryFormat(headers.Length + payload.Length, span[position..], out written);
        position += written;
        span[position++] = (byte)'\r';
        span[position++] = (byte)'\n';
        var messageStart = position;
        headers.CopyTo(span[position..]);
        position += headers.Length;
        payload.CopyTo(span[position..]);
        position += payload.Length;
        span[position++] = (byte)'\r';
        span[position++] = (byte)'\n';
        InMsgs++;
        InBytes += headers.Length + payload.Length;
        var delivered = FanOut(result, span[..prefixLength], span[prefixLength..messageStart], span[messageStart..position],
            headers.IsEmpty ? -1 : headers.Length, subject, reply);
        FlushPendingClients();
        return delivered;
    }
}
