using Nats.Server.Clients;
using Nats.Server.Hosting;

namespace Nats.Server.Delivery;

/// <summary>
/// Who publishes a message: a client's read loop, or one of the server's own loops (JetStream, system
/// events, a route bringing a peer's messages in). It is what routing needs of the publisher: its
/// router, the batch it flushes, the subscribers it waits for and whether it may wait. A client has
/// one (<see cref="ClientConnection.Origin"/>); the server's publishers are just this, with no
/// connection behind them. Used only on the publishing thread.
/// </summary>
internal sealed class MessageOrigin
{
    private readonly NatsServer _server;

    /// <summary>The origin of a client's publishes.</summary>
    public MessageOrigin(NatsServer server, ClientConnection connection)
        : this(server, connection, 0, canStall: false)
    {
    }

    /// <summary>The origin of one of the server's own publishing loops; <paramref name="canStall"/> lets a full
    /// subscriber pause it (its loop then awaits <see cref="StalledOn"/>).</summary>
    public MessageOrigin(NatsServer server, ulong id, bool canStall = false)
        : this(server, null, id, canStall)
    {
    }

    private MessageOrigin(NatsServer server, ClientConnection? connection, ulong id, bool canStall)
    {
        _server = server;
        Connection = connection;
        _id = id;
        _canStall = canStall;
        StartTime = DateTime.UtcNow;
        FlushBatch = new FlushBatch(server);
        Router = new MessageRouter(this);
    }

    private readonly bool _canStall;
    private readonly ulong _id;

    /// <summary>The client publishing; null for the server's own publishers.</summary>
    public ClientConnection? Connection { get; }

    public ulong Id => Connection?.Id ?? _id;
    public DateTime StartTime { get; }

    public MessageRouter Router { get; }

    /// <summary>The outbound queues this publisher fed, flushed at the end of its batch.</summary>
    public FlushBatch FlushBatch { get; }

    /// <summary>Subscribers this publisher must wait for before it goes on.</summary>
    public StallList StalledOn { get; } = new();

    /// <summary>Whether a full subscriber may pause this publisher: a client's read loop (or an internal
    /// client made stallable), never the server's own loops.</summary>
    public bool CanStall => Connection is { } connection ? connection.Settings.CanStall : _canStall || WaitsForSubscribers;

    /// <summary>A server loop whose messages are stored (a JetStream consumer delivering): while set, a full
    /// subscriber pauses it, and it is never dropped for under no_fast_producer_stall.</summary>
    public bool WaitsForSubscribers { get; set; }

    /// <summary>Set on the origin of a leaf connection we are the hub of, to the leaf's cluster: what it publishes goes to
    /// routes as LMSG with that cluster (Go's lnoc), so the other hubs never hand it back to that cluster.</summary>
    public byte[]? LeafOrigin { get; set; }

    /// <summary>Messages and bytes published (a client counts its own; these are the server's).</summary>
    public long InMsgs;
    public long InBytes;

    /// <summary>A receiver that is not a client queue (an MQTT connection's outbound) is past its stall
    /// threshold after this publisher's delivery: it waits for it as for a full client, if it can wait.</summary>
    public void StallOn(IDrainable subscriber)
    {
        if (CanStall)
        {
            StalledOn.Add(subscriber);
        }
    }

    /// <summary>Go's ClientInfo for a service request through an import of <paramref name="account"/>.</summary>
    public byte[] RequestInfoJson(string account, bool share, bool serverInfo) =>
        Connection is { } connection
            ? connection.RequestInfoJson(account, share, serverInfo)
            : new RequestInfo(account, share, StartTime, "", Id, null, null, null, null, TimeSpan.Zero, _server.ServerName, _server.EventClusterName,
                serverInfo).ToJson();
}
