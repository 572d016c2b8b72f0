using Nats.Server.Configuration;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

/// <summary>
/// What one connection currently speaks and may do: the server options in force (a reload replaces
/// them), the CONNECT choices (headers, echo), its limits and where it is in the handshake. Plain
/// fields, read on every command by the read loop; written by CONNECT on that loop, or by a reload.
/// </summary>
internal sealed class ConnectionSettings
{
    public ServerOptions Options;
    public int MaxPayload;
    // -1: no limit.
    public int MaxSubscriptions = -1;
    public bool Headers;
    public bool Echo = true;
    public bool ConnectReceived;
    public bool AwaitingAuth;
    public bool Trace;

    // Tick by which CONNECT must have authenticated; 0 once it has (or when no auth is required).
    public long AuthDeadlineTicks;

    // Tick at which the login stops being valid (user JWT expiry, end of its connect window); 0: never.
    public long AuthExpiresTicks;

    // Set once the client has had its first PONG after CONNECT (Go's firstPongSent): from then on it
    // may be sent async INFO updates, if it declared protocol 1.
    public volatile bool FirstPongSent;

    /// <summary>The server's own publisher: never stalled by flow control, unless <see cref="Stallable"/>.</summary>
    public bool IsInternal;

    /// <summary>An internal client publishing for a connection that reads a socket of its own (MQTT).</summary>
    public bool Stallable;

    public ConnectionSettings(ServerOptions options, bool awaitingAuth, bool trace)
    {
        Options = options;
        MaxPayload = options.MaxPayload;
        AwaitingAuth = awaitingAuth;
        Trace = trace;
    }

    /// <summary>Whether a publisher with these settings may be paused by a full subscriber.</summary>
    public bool CanStall => !IsInternal || Stallable;

    public ParserLimits ParserLimits => new(Options.MaxControlLine, MaxPayload, Headers, AwaitingAuth);

    /// <summary>The server speaking as itself: already connected, never authenticating.</summary>
    public void MarkInternal(bool stallable)
    {
        AwaitingAuth = false;
        ConnectReceived = true;
        IsInternal = true;
        Stallable = stallable;
    }

    /// <summary>Takes the CONNECT choices; headers only if the server supports them.</summary>
    public void ApplyConnect(ConnectOptions connect)
    {
        ConnectReceived = true;
        Echo = connect.Echo;
        Headers = !Options.NoHeaderSupport && connect.Headers;
    }

    public void ApplyLimits(in ClientLimits limits)
    {
        Volatile.Write(ref MaxPayload, limits.MaxPayload);
        MaxSubscriptions = limits.MaxSubscriptions;
    }

    /// <summary>
    /// Marks the first PONG after CONNECT; true when it is the first and a protocol-1 client must get a
    /// fresh INFO because its max_payload differs from the server's (Go's processPing).
    /// </summary>
    public bool FirstPongNeedsInfo(int protocol)
    {
        if (FirstPongSent || !ConnectReceived)
        {
            return false;
        }
        FirstPongSent = true;
        return protocol >= 1 && MaxPayload != Options.MaxPayload;
    }
}
