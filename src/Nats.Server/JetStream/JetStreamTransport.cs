using System.Globalization;
using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Delivery;
using Nats.Server.Subscriptions;

namespace Nats.Server.JetStream;

/// <summary>
/// A message for JetStream, on the publisher's thread. Spans are valid only during the call.
/// </summary>
internal delegate void JetStreamMessageHandler(
    Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload);

/// <summary>A message for a stream, with the publisher's batch: its PubAck may wait for the batch's end
/// (<see cref="Clients.FlushBatch.AtEnd"/>).</summary>
internal delegate void JetStreamIngestHandler(
    Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload,
    Clients.FlushBatch batch);

/// <summary>An API request, with the client that sent it (for Go's API audit advisory).</summary>
internal delegate void JetStreamApiHandler(
    Clients.ClientConnection? origin, Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload);

/// <summary>
/// The only place JetStream touches the server's delivery internals: subscriptions are receivers on
/// the delivery seam (<see cref="MessageReceiver"/>), and everything JetStream sends goes out through
/// one <see cref="InternalPublisher"/> (normal routing, imports included, headers as HMSG).
/// </summary>
internal sealed class JetStreamTransport(InternalPublisher publisher, InternalPublisher advisories)
{
    // The publisher is single-threaded by contract; acks are sent from every publishing client's thread.
    private readonly Lock _publishLock = new();
    private readonly Lock _advisoryLock = new();
    private long _sid;

    private InternalPublisher Publisher => publisher;

    /// <summary>Subscribes in <paramref name="account"/>; dispose the result to unsubscribe.</summary>
    public IDisposable Subscribe(Account account, string subject, JetStreamMessageHandler handler)
    {
        var sid = Interlocked.Increment(ref _sid).ToString(CultureInfo.InvariantCulture);
        var subscription = new Subscription(new Receiver(publisher, handler), Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid));
        if (!account.SubList.Insert(subscription))
        {
            throw new ArgumentException($"invalid JetStream subscription subject {subject}", nameof(subject));
        }
        return new Registration(account, subscription);
    }

    /// <summary>Subscribes a stream's ingest, which answers with the publisher's batch.</summary>
    public IDisposable SubscribeIngest(Account account, string subject, JetStreamIngestHandler handler) =>
        Subscribe(account, subject, new IngestReceiver(publisher, handler));

    /// <summary>Subscribes an API handler, which also learns the requesting client.</summary>
    public IDisposable SubscribeApi(Account account, string subject, JetStreamApiHandler handler) =>
        Subscribe(account, subject, new ApiReceiver(publisher, handler));

    private IDisposable Subscribe(Account account, string subject, MessageReceiver receiver)
    {
        var sid = Interlocked.Increment(ref _sid).ToString(CultureInfo.InvariantCulture);
        var subscription = new Subscription(receiver, Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid));
        if (!account.SubList.Insert(subscription))
        {
            throw new ArgumentException($"invalid JetStream subscription subject {subject}", nameof(subject));
        }
        return new Registration(account, subscription);
    }

    /// <summary>Publishes into <paramref name="account"/>; <paramref name="headers"/> is a complete NATS/1.0 block or empty. Thread-safe.</summary>
    public bool Publish(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_publishLock)
        {
            return publisher.Publish(account, subject, reply, headers, payload);
        }
    }

    /// <summary>
    /// Advisories go out through a second internal client, so streams capture them as Go's do (a stream
    /// on <c>$JS.EVENT.&gt;</c> keeps them); everything else JetStream sends never feeds JetStream back.
    /// Never call with the publish lock held.
    /// </summary>
    public bool PublishAdvisory(Account account, string subject, ReadOnlySpan<byte> payload)
    {
        lock (_advisoryLock)
        {
            return advisories.Publish(account, Encoding.UTF8.GetBytes(subject), default, default, payload, replySet: true);
        }
    }

    /// <summary>A message Go sends from a stream's internal queue (a republish): the reply field is set but empty, as Go writes it.</summary>
    public bool PublishAsGoInternal(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_publishLock)
        {
            return publisher.Publish(account, subject, default, headers, payload, replySet: true);
        }
    }

    /// <summary>Takes the publish lock for a batch of publishes (a sync round's PubAcks): each receiving
    /// client is written once when the batch is disposed, instead of once per message.</summary>
    public PublishBatch BeginBatch()
    {
        _publishLock.Enter();
        return new PublishBatch(this);
    }

    public readonly ref struct PublishBatch
    {
        private readonly JetStreamTransport _transport;

        internal PublishBatch(JetStreamTransport transport) => _transport = transport;

        public bool Publish(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload) =>
            _transport.Publisher.PublishDeferred(account, subject, default, default, payload);

        public void Dispose()
        {
            try
            {
                _transport.Publisher.FlushBatch();
            }
            finally
            {
                _transport._publishLock.Exit();
            }
        }
    }

    /// <summary>Delivers a stored message to <paramref name="deliverTo"/> (push deliver subject or pull inbox) under its own subject.</summary>
    public bool Deliver(Account account, ReadOnlySpan<byte> deliverTo, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_publishLock)
        {
            return publisher.Deliver(account, deliverTo, subject, reply, headers, payload);
        }
    }

    /// <summary>Starts a consumer's batch of deliveries: each receiving client is written once per
    /// <see cref="DeliveryBatch.MaxHeld"/> deliveries (and at the end) instead of once per message.</summary>
    public DeliveryBatch BeginDelivery() => new(this);

    /// <summary>Holds the publish lock across up to <see cref="MaxHeld"/> deliveries, then flushes and lets
    /// other publishers (PubAcks, other consumers) in before taking it again. Dispose to flush the rest.</summary>
    public struct DeliveryBatch : IDisposable
    {
        public const int MaxHeld = 256;

        private readonly JetStreamTransport _transport;
        private int _held;

        internal DeliveryBatch(JetStreamTransport transport) => _transport = transport;

        public bool Deliver(Account account, ReadOnlySpan<byte> deliverTo, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
        {
            if (_held == 0)
            {
                _transport._publishLock.Enter();
            }
            var delivered = _transport.Publisher.DeliverDeferred(account, deliverTo, subject, reply, headers, payload);
            if (++_held >= MaxHeld)
            {
                Flush();
            }
            return delivered;
        }

        /// <summary>Writes what is batched so far (before a status message or a wait).</summary>
        public void Flush()
        {
            if (_held == 0)
            {
                return;
            }
            _held = 0;
            try
            {
                _transport.Publisher.FlushBatch();
            }
            finally
            {
                _transport._publishLock.Exit();
            }
        }

        public void Dispose() => Flush();
    }

    /// <summary>Whether anyone in <paramref name="account"/> listens on <paramref name="subject"/> (push consumer activity, pull request interest).</summary>
    public static bool HasInterest(Account account, string subject) => !account.SubList.Match(Encoding.UTF8.GetBytes(subject)).IsEmpty;

    /// <inheritdoc cref="HasInterest(Account, string)"/>
    public static bool HasInterest(Account account, ReadOnlySpan<byte> subject) => !account.SubList.Match(subject).IsEmpty;

    public bool Publish(Account account, string subject, ReadOnlySpan<byte> payload) =>
        Publish(account, Encoding.UTF8.GetBytes(subject), default, default, payload);

    private sealed class Receiver(InternalPublisher publisher, JetStreamMessageHandler handler) : MessageReceiver
    {
        public override bool Deliver(Subscription subscription, in Message message)
        {
            // JetStream's own publishes (replies, acks, advisories) never feed JetStream back.
            if (message.Origin == publisher.Origin)
            {
                return false;
            }
            handler(message.Account, message.Subject, message.Reply, message.Headers, message.Payload);
            return true;
        }
    }

    private sealed class IngestReceiver(InternalPublisher publisher, JetStreamIngestHandler handler) : MessageReceiver
    {
        public override bool Deliver(Subscription subscription, in Message message)
        {
            if (message.Origin == publisher.Origin)
            {
                return false;
            }
            handler(message.Account, message.Subject, message.Reply, message.Headers, message.Payload, message.Origin.FlushBatch);
            return true;
        }
    }

    private sealed class ApiReceiver(InternalPublisher publisher, JetStreamApiHandler handler) : MessageReceiver
    {
        public override bool Deliver(Subscription subscription, in Message message)
        {
            if (message.Origin == publisher.Origin)
            {
                return false;
            }
            handler(message.Origin.Connection, message.Account, message.Subject, message.Reply, message.Headers, message.Payload);
            return true;
        }
    }

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
