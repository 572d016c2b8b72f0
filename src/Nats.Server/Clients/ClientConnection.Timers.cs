using Microsoft.Extensions.Logging;
using Nats.Server.Protocol;

namespace Nats.Server.Clients;

/// <summary>
/// Time-driven checks, run by the server's single heartbeat rather than a timer per connection:
/// authentication timeout, server PINGs with stale-connection detection, and the write deadline.
/// </summary>
internal sealed partial class ClientConnection
{
    // Go sends the first PING early (at most 2 s after connect) to measure RTT.
    private static readonly TimeSpan FirstPingInterval = TimeSpan.FromSeconds(2);

    private long _lastActivityTicks;
    private long _lastPingReceivedTicks;
    private long _nextPingTicks;
    private long _authDeadlineTicks;
    private int _pingsOut;
    private bool _firstPingSent;

    public long LastActivityTicks => Volatile.Read(ref _lastActivityTicks);
    public int PingsOut => Volatile.Read(ref _pingsOut);

    private void ScheduleFirstPing(long now)
    {
        var interval = _options.PingInterval < FirstPingInterval ? _options.PingInterval : FirstPingInterval;
        var jitter = (long)(Random.Shared.NextDouble() * interval.TotalMilliseconds / 5);
        Volatile.Write(ref _nextPingTicks, now + (long)interval.TotalMilliseconds + jitter);
    }

    internal void OnHeartbeat(long now)
    {
        if (IsClosed)
        {
            return;
        }
        var authDeadline = Volatile.Read(ref _authDeadlineTicks);
        if (authDeadline != 0 && _awaitingAuth && now >= authDeadline)
        {
            _logger.LogError("{Client} - Authentication Timeout", this);
            SendProtocolNow(ErrorTexts.AuthenticationTimeout);
            CloseConnection(ClosedReason.AuthenticationTimeout);
            return;
        }

        var writeStarted = _outbound.WriteStartedTicks;
        if (writeStarted != 0 && now - writeStarted > (long)_options.WriteDeadline.TotalMilliseconds)
        {
            _server.RecordSlowConsumer();
            _logger.LogInformation("{Client} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded", this, _options.WriteDeadline);
            CloseConnection(ClosedReason.SlowConsumerWriteDeadline);
            return;
        }

        var due = Volatile.Read(ref _nextPingTicks);
        if (due == 0 || now < due)
        {
            return;
        }
        var interval = (long)_options.PingInterval.TotalMilliseconds;
        Volatile.Write(ref _nextPingTicks, now + interval);

        // Mirrors processPingTimer: recent traffic either way postpones the PING, except the first.
        var recentActivity = now - Volatile.Read(ref _lastActivityTicks) < interval
            || now - Volatile.Read(ref _lastPingReceivedTicks) < interval;
        if (_firstPingSent && recentActivity)
        {
            return;
        }
        if (Volatile.Read(ref _pingsOut) + 1 > _options.MaxPingsOut)
        {
            _logger.LogDebug("{Client} - Stale Client Connection - Closing", this);
            SendProtocolNow(ErrorTexts.StaleConnection);
            CloseConnection(ClosedReason.StaleConnection);
            return;
        }
        _firstPingSent = true;
        Interlocked.Increment(ref _pingsOut);
        MarkRttPingSent();
        if (_trace)
        {
            Trace("->>", "PING"u8, default);
        }
        SendProtocolNow("PING\r\n"u8);
    }
}
