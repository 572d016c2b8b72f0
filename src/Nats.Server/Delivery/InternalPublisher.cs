using Nats.Server.Accounts;
using Nats.Server.Clients;

namespace Nats.Server.Delivery;

/// <summary>
/// The server publishing as itself (a JetStream API reply or ack, a system event, an MQTT will): the
/// message takes the same route as a client's PUB — receivers, client subscribers, queue groups,
/// stream and service imports — with an optional header block, and the receiving clients are
/// flushed before <see cref="Publish"/> returns. Not thread-safe: every loop that publishes owns
/// one (<see cref="Hosting.NatsServer.CreateInternalPublisher"/>): a <see cref="MessageOrigin"/> with no
/// connection behind it. An MQTT session publishes through its internal client's origin instead, which
/// flow control may pause (<see cref="InternalClient.CreateStallable"/>).
/// </summary>
internal sealed class InternalPublisher
{
    private readonly MessageOrigin _origin;
    private readonly MessageRouter _router;
    private readonly FlushBatch _flushBatch;

    /// <summary>Publishes as the server itself.</summary>
    internal InternalPublisher(MessageOrigin origin)
    {
        _origin = origin;
        _router = origin.Router;
        _flushBatch = origin.FlushBatch;
    }

    /// <summary>Publishes as <paramref name="client"/> (an MQTT session's internal client).</summary>
    internal InternalPublisher(ClientConnection client)
        : this(client.Origin)
    {
    }

    /// <summary>Who publishes; receivers see it as <see cref="Message.Origin"/>.</summary>
    public MessageOrigin Origin => _origin;

    /// <summary>
    /// Publishes into <paramref name="account"/>; <paramref name="headers"/> is a complete NATS/1.0 block
    /// (ending in a blank line) or empty. Returns whether anything received it.
    /// </summary>
    /// <param name="replySet">Write an empty reply field as Go's internal sender does (two spaces before the
    /// size): Go's advisories and system events look like that; clients accept it and a differential test
    /// sees it. A response that Go routes back through a service import is written normally.</param>
    public bool Publish(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload, bool replySet = false)
    {
        Count(headers, payload);
        var delivered = _router.RouteInternal(account, subject, reply, headers, payload, replySet);
        _flushBatch.FlushAll();
        return delivered;
    }

    /// <summary>As <see cref="Publish"/> but the receivers are flushed only by <see cref="FlushBatch"/>:
    /// a batch of publishes (a group commit round's PubAcks) gives each receiving client one write.</summary>
    public bool PublishDeferred(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload)
    {
        Count(headers, payload);
        return _router.RouteInternal(account, subject, reply, headers, payload, replySet: false);
    }

    /// <summary>Flushes the clients that deferred publishes wrote to.</summary>
    public void FlushBatch() => _flushBatch.FlushAll();

    /// <summary>Delivers to the subscribers of <paramref name="route"/> a message shown under <paramref name="subject"/>
    /// (a stored JetStream message going to a consumer's deliver subject or a pull request's inbox).</summary>
    public bool Deliver(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        Count(headers, payload);
        var delivered = _router.RouteInternal(account, route, subject, reply, headers, payload, replySet: false);
        _flushBatch.FlushAll();
        return delivered;
    }

    /// <summary>As <see cref="Deliver"/> but the receivers are flushed only by <see cref="FlushBatch"/>.</summary>
    public bool DeliverDeferred(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        Count(headers, payload);
        return _router.RouteInternal(account, route, subject, reply, headers, payload, replySet: false);
    }

    /// <summary>A subscriber this publisher fed is full: a stallable client's connection must await
    /// <see cref="WaitForStallsAsync"/> before it reads on.</summary>
    public bool StallPending => _origin.StalledOn.MustStall;

    public ValueTask WaitForStallsAsync() => _origin.StalledOn.WaitAllAsync();

    private void Count(ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        if (_origin.Connection is { } client)
        {
            client.InMsgs++;
            client.InBytes += headers.Length + payload.Length;
            return;
        }
        _origin.InMsgs++;
        _origin.InBytes += headers.Length + payload.Length;
    }
}
