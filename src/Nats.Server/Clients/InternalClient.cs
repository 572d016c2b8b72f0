using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Accounts.SystemEvents;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// The server's own clients (Go's internal SYSTEM client): a <see cref="ClientConnection"/> over no
/// socket that holds handler subscriptions and publishes, through a <see cref="Delivery.InternalPublisher"/>,
/// events, replies and JetStream/MQTT traffic with the same routing as a client PUB.
/// </summary>
internal static class InternalClient
{
    /// <summary>An internal client that flow control never pauses (system events, JetStream).</summary>
    public static ClientConnection Create(NatsServer server, ulong id, Account account, ILogger logger) =>
        Create(server, id, account, logger, stallable: false);

    /// <summary>An internal client publishing for a connection that reads a socket of its own (an MQTT
    /// connection): flow control may pause it, and that connection awaits
    /// <see cref="Delivery.InternalPublisher.WaitForStallsAsync"/>.</summary>
    public static ClientConnection CreateStallable(NatsServer server, ulong id, Account account, ILogger logger) =>
        Create(server, id, account, logger, stallable: true);

    private static ClientConnection Create(NatsServer server, ulong id, Account account, ILogger logger, bool stallable)
    {
        var client = new ClientConnection(server, InternalTransport.Instance, id, account, logger);
        client.Settings.MarkInternal(stallable);
        return client;
    }

    /// <summary>Adds to <paramref name="client"/>'s own account a subscription whose messages go to
    /// <paramref name="handler"/> instead of a socket; it goes when the client closes.</summary>
    public static Subscription Subscribe(ClientConnection client, string subject, string sid, InternalMessageHandler handler)
    {
        var subscription = HandlerSubscription(client, subject, sid, handler);
        if (!client.Subscriptions.Add(subscription, client.Account.SubList))
        {
            throw new ArgumentException($"invalid internal subscription subject {subject}", nameof(subject));
        }
        return subscription;
    }

    /// <summary>
    /// Adds a handler subscription to another account's index (Go gives each account an internal
    /// client for its system service imports); not tracked by sid, since sids repeat per account.
    /// </summary>
    public static Subscription SubscribeInAccount(ClientConnection client, Account account, string subject, string sid, InternalMessageHandler handler,
        bool serviceImport = false)
    {
        var subscription = new Subscription(new Delivery.HandlerReceiver(handler, client), Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid))
        {
            IsServiceImport = serviceImport,
        };
        if (!account.SubList.Insert(subscription))
        {
            throw new ArgumentException($"invalid internal subscription subject {subject}", nameof(subject));
        }
        return subscription;
    }

    private static Subscription HandlerSubscription(ClientConnection client, string subject, string sid, InternalMessageHandler handler) =>
        new(new Delivery.HandlerReceiver(handler, client), Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid));
}
