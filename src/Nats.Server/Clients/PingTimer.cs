using System.Diagnostics;

namespace Nats.Server.Clients;

/// <summary>What the heartbeat must do about a connection's keepalive.</summary>
internal enum PingAction
{
    None,

    /// <summary>Send a PING now (already counted as outstanding, RTT clock started).</summary>
    SendPing,

    /// <summary>Too many PINGs unanswered: the connection is stale and must be closed.</summary>
    Stale,
}

/// <summary>
/// A connection's keepalive (Go's processPingTimer): last activity either way, PINGs sent and
/// answered, the round-trip estimate. Driven by the server's single heartbeat rather than a timer
/// per connection; the read loop, the write side and the heartbeat update it from their own threads,
/// so every field is read and written atomically.
/// </summary>
internal sealed class PingTimer
{
    // Go sends the first PING early (at most 2 s after connect) to measure RTT.
    private static readonly TimeSpan FirstPingInterval = TimeSpan.FromSeconds(2);

    private long _lastActivityTicks;
    private long _lastPingReceivedTicks;
    private long _nextPingTicks;
    private int _pingsOut;
    private bool _firstPingSent;
    private long _rttTicks;
    private long _rttPingTimestamp;

    public PingTimer(long now) => _lastActivityTicks = now;

    /// <summary>Millisecond tick (Environment.TickCount64) of the last read or write.</summary>
    public long LastActivityTicks => Volatile.Read(ref _lastActivityTicks);

    public int PingsOut => Volatile.Read(ref _pingsOut);

    /// <summary>Latest round-trip estimate; zero until CONNECT.</summary>
    public TimeSpan Rtt => TimeSpan.FromTicks(Volatile.Read(ref _rttTicks));

    /// <summary>Tick at which the next PING is due; zero while none is scheduled.</summary>
    public long NextPingTicks => Volatile.Read(ref _nextPingTicks);

    /// <summary>Data was read or written.</summary>
    public void NoteActivity(long now) => Volatile.Write(ref _lastActivityTicks, now);

    /// <summary>Arms the first PING early (jittered so connections accepted together do not ping together).</summary>
    public void ScheduleFirstPing(long now, TimeSpan pingInterval)
    {
        var interval = pingInterval < FirstPingInterval ? pingInterval : FirstPingInterval;
        var jitter = (long)(Random.Shared.NextDouble() * interval.TotalMilliseconds / 5);
        Volatile.Write(ref _nextPingTicks, now + (long)interval.TotalMilliseconds + jitter);
    }

    public void OnPingReceived(long now) => Volatile.Write(ref _lastPingReceivedTicks, now);

    /// <summary>The client answered: nothing is outstanding any more, and the PING's round trip is measured.</summary>
    public void OnPong()
    {
        Volatile.Write(ref _pingsOut, 0);
        var sent = Volatile.Read(ref _rttPingTimestamp);
        if (sent != 0)
        {
            Volatile.Write(ref _rttTicks, Math.Max(1, Stopwatch.GetElapsedTime(sent).Ticks));
        }
    }

    /// <summary>Like Go, the first estimate is the time from accept to CONNECT.</summary>
    public void EstimateRttAtConnect(DateTime startTime) =>
        Volatile.Write(ref _rttTicks, Math.Max(1, (DateTime.UtcNow - startTime).Ticks));

    /// <summary>
    /// Called by the heartbeat: whether a PING is due, mirroring processPingTimer. Recent traffic
    /// either way postpones a PING, except the first; one more unanswered PING than
    /// <paramref name="maxPingsOut"/> allows makes the connection stale.
    /// </summary>
    public PingAction Check(long now, TimeSpan pingInterval, int maxPingsOut)
    {
        var due = Volatile.Read(ref _nextPingTicks);
        if (due == 0 || now < due)
        {
            return PingAction.None;
        }
        var interval = (long)pingInterval.TotalMilliseconds;
        Volatile.Write(ref _nextPingTicks, now + interval);

        var recentActivity = now - Volatile.Read(ref _lastActivityTicks) < interval
            || now - Volatile.Read(ref _lastPingReceivedTicks) < interval;
        if (_firstPingSent && recentActivity)
        {
            return PingAction.None;
        }
        if (Volatile.Read(ref _pingsOut) + 1 > maxPingsOut)
        {
            return PingAction.Stale;
        }
        _firstPingSent = true;
        Interlocked.Increment(ref _pingsOut);
        Volatile.Write(ref _rttPingTimestamp, Stopwatch.GetTimestamp());
        return PingAction.SendPing;
    }
}
