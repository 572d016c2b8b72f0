using Nats.Server.Accounts;
using Nats.Server.Clients;

namespace Nats.Server.Delivery;

/// <summary>
/// The server publishing as itself (a JetStream API reply or ack, an advisory, an MQTT will): the
/// message takes the same route as a client's PUB — receivers, client subscribers, queue groups,
/// stream and service imports — with an optional header block, and the receiving clients are
/// flushed before <see cref="Publish"/> returns. Not thread-safe: every loop that publishes owns
/// one (<see cref="Hosting.NatsServer.CreateInternalPublisher"/>). It is never paused by flow control.
/// </summary>
internal sealed class InternalPublisher
{
    private readonly ClientConnection _client;

    internal InternalPublisher(ClientConnection client) => _client = client;

    /// <summary>The internal connection publishing; receivers see it as <see cref="Message.Origin"/>.</summary>
    public ClientConnection Client => _client;

    /// <summary>
    /// Publishes into <paramref name="account"/>; <paramref name="headers"/> is a complete NATS/1.0 block
    /// (ending in a blank line) or empty. Returns whether anything received it.
    /// </summary>
    /// <param name="replySet">Write an empty reply field as Go's internal sender does (two spaces before the
    /// size): Go's advisories and republished messages look like that.</param>
    public bool Publish(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload, bool replySet = false) =>
        _client.PublishInternal(account, subject, reply, headers, payload, replySet);

    /// <summary>As <see cref="Publish"/> but the receivers are flushed only by <see cref="FlushBatch"/>.</summary>
    public bool PublishDeferred(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload) =>
        _client.PublishInternalDeferred(account, subject, reply, headers, payload);

    /// <summary>Flushes the clients that deferred publishes wrote to.</summary>
    public void FlushBatch() => _client.FlushInternalBatch();

    /// <summary>Delivers to the subscribers of <paramref name="route"/> a message shown under <paramref name="subject"/>
    /// (a stored JetStream message going to a consumer's deliver subject or a pull request's inbox).</summary>
    public bool Deliver(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload) =>
        _client.PublishInternalRouted(account, route, subject, reply, headers, payload);

    /// <summary>As <see cref="Deliver"/> but the receivers are flushed only by <see cref="FlushBatch"/>.</summary>
    public bool DeliverDeferred(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload) =>
        _client.PublishInternalRoutedDeferred(account, route, subject, reply, headers, payload);
}
