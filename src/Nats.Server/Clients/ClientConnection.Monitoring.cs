using System.Diagnostics;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// What /connz reads from a connection beyond the plain counters: round-trip time, last activity
/// as a wall-clock time, the raw authenticated user, and the subscriptions it held when it closed.
/// Nothing here runs per message.
/// </summary>
internal sealed partial class ClientConnection
{
    private long _rttTicks;
    private long _rttPingTimestamp;
    private Subscription[]? _subscriptionsAtClose;

    /// <summary>Latest round-trip estimate; zero until CONNECT.</summary>
    public TimeSpan Rtt => TimeSpan.FromTicks(Volatile.Read(ref _rttTicks));

    /// <summary>Wall-clock time of the last read or write (the core keeps a cheap millisecond tick).</summary>
    public DateTime LastActivity
    {
        get
        {
            var idle = Environment.TickCount64 - LastActivityTicks;
            var last = DateTime.UtcNow - TimeSpan.FromMilliseconds(Math.Max(0, idle));
            return last < StartTime ? StartTime : last;
        }
    }

    /// <summary>The credential Go reports as authorized_user (getRawAuthUser): nkey, user, or token.</summary>
    public string? RawAuthUser =>
        !string.IsNullOrEmpty(_connect.Nkey) ? _connect.Nkey
        : !string.IsNullOrEmpty(_connect.User) ? _connect.User
        : !string.IsNullOrEmpty(_connect.AuthToken) ? _connect.AuthToken
        : null;

    /// <summary>Subscriptions removed when the connection closed, kept for the closed-connections list.</summary>
    internal IReadOnlyList<Subscription> SubscriptionsAtClose => _subscriptionsAtClose ?? [];

    internal void KeepSubscriptionsAtClose(Subscription[] subscriptions) => _subscriptionsAtClose = subscriptions;

    /// <summary>Like Go, the first estimate is the time from accept to CONNECT.</summary>
    internal void EstimateRttAtConnect() => Volatile.Write(ref _rttTicks, Math.Max(1, (DateTime.UtcNow - StartTime).Ticks));

    internal void MarkRttPingSent() => Volatile.Write(ref _rttPingTimestamp, Stopwatch.GetTimestamp());

    internal void MeasureRttOnPong()
    {
        var sent = Volatile.Read(ref _rttPingTimestamp);
        if (sent != 0)
        {
            Volatile.Write(ref _rttTicks, Math.Max(1, Stopwatch.GetElapsedTime(sent).Ticks));
        }
    }

    /// <summary>The TLS session for /connz (null on plain connections and before the handshake).</summary>
    internal Transport.TlsConnectionState? TlsState => _transport.Tls;
}
