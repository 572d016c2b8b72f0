using Nats.Server.Clients;
using Nats.Server.Subscriptions;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// Receives a message for one of the server's own subscriptions, on the publisher's thread. Spans are
/// only valid during the call; the body excludes the trailing CRLF. Returns whether it was taken
/// (false counts as "no responder" for the publisher).
/// </summary>
internal delegate bool InternalMessageHandler(
    Subscription subscription,
    Delivery.MessageOrigin publisher,
    ReadOnlySpan<byte> subject,
    ReadOnlySpan<byte> reply,
    ReadOnlySpan<byte> headers,
    ReadOnlySpan<byte> body);
