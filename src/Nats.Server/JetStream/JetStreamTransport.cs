using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;

namespace Nats.Server.JetStream;

/// <summary>
/// A message for JetStream, on the publisher's thread. Spans are valid only during the call.
/// </summary>
internal delegate void JetStreamMessageHandler(
    Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload);

/// <summary>
/// The only place JetStream touches the server's subscribe and publish internals, so it can move onto
/// the delivery seam by changing this file: today an internal client's handler subscriptions and
/// <see cref="ClientConnection.PublishInternal(Account, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, bool)"/>
/// (normal fan-out, headers as HMSG, no import routing).
/// </summary>
internal sealed class JetStreamTransport
{
    private readonly ClientConnection _client;
    private readonly Lock _publishLock = new();
    private long _sid;

    public JetStreamTransport(NatsServer server, ulong clientId, Account account, ILogger logger)
    {
        _client = ClientConnection.CreateInternal(server, clientId, account, logger);
    }

    /// <summary>Subscribes in <paramref name="account"/>; dispose the result to unsubscribe.</summary>
    public IDisposable Subscribe(Account account, string subject, JetStreamMessageHandler handler)
    {
        var sid = Interlocked.Increment(ref _sid).ToString(System.Globalization.CultureInfo.InvariantCulture);
        var subscription = _client.SubscribeInAccount(account, subject, sid,
            (_, publisher, subj, reply, headers, body) =>
            {
                // The internal client's own publishes (our replies and acks) never feed JetStream back.
                if (publisher == _client)
                {
                    return false;
                }
                handler(publisher.Account, subj, reply, headers, body);
                return true;
            });
        return new Registration(account, subscription);
    }

    /// <summary>Publishes into <paramref name="account"/>; thread-safe (the internal client's scratch space is shared).</summary>
    public bool Publish(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_publishLock)
        {
            return _client.PublishInternal(account, subject, reply, headers, payload, replySet: false);
        }
    }

    /// <summary>Delivers a stored message to <paramref name="deliverTo"/> (push deliver subject or pull inbox) under its own subject.</summary>
    public bool Deliver(Account account, ReadOnlySpan<byte> deliverTo, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_publishLock)
        {
            return _client.PublishInternalRouted(account, deliverTo, subject, reply, headers, payload, replySet: false);
        }
    }

    /// <summary>Whether anyone in <paramref name="account"/> listens on <paramref name="subject"/> (push consumer activity, pull request interest).</summary>
    public static bool HasInterest(Account account, string subject) => !account.SubList.Match(Encoding.UTF8.GetBytes(subject)).IsEmpty;

    public bool Publish(Account account, string subject, ReadOnlySpan<byte> payload) =>
        Publish(account, Encoding.UTF8.GetBytes(subject), default, default, payload);

    private sealed class Registration(Account account, Subscription subscription) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                account.SubList.Remove(subscription);
            }
        }
    }
}
