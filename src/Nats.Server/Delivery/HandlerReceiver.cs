using Nats.Server.Accounts.SystemEvents;
using Nats.Server.Subscriptions;

namespace Nats.Server.Delivery;

/// <summary>A server-side request handler (the system account's $SYS services) as a receiver.</summary>
internal sealed class HandlerReceiver(InternalMessageHandler handler, Clients.ClientConnection? connection = null) : MessageReceiver
{
    public override Clients.ClientConnection? Connection => connection;

    public override bool Deliver(Subscription subscription, in Message message) =>
        handler(subscription, message.Origin, message.Subject, message.Reply, message.Headers, message.Payload);
}
