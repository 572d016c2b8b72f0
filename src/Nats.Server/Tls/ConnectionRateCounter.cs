using Microsoft.Extensions.Logging;

namespace Nats.Server.Tls;

/// <summary>
/// connection_rate_limit as Go's rateCounter: a one-second window opened by the first handshake after
/// the last one ended, in which <c>limit</c> handshakes are allowed. Refusals are counted and logged
/// once a second, as Go's logRejectedTLSConns does (only when there were some).
/// </summary>
internal sealed class ConnectionRateCounter(long limit)
{
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private readonly Lock _sync = new();
    private long _count;
    private long _windowEnd;
    private long _blocked;
    private Timer? _report;

    public bool Allow(ILogger logger)
    {
        var now = Environment.TickCount64;
        lock (_sync)
        {
            if (now > _windowEnd)
            {
                _count = 0;
                _windowEnd = now + (long)Interval.TotalMilliseconds;
            }
            else
            {
                _count++;
            }
            if (_count < limit)
            {
                return true;
            }
            if (_blocked++ == 0)
            {
                _report ??= new Timer(_ => Report(logger), null, Timeout.Infinite, Timeout.Infinite);
                _report.Change(Interval, Timeout.InfiniteTimeSpan);
            }
            return false;
        }
    }

    private void Report(ILogger logger)
    {
        long blocked;
        lock (_sync)
        {
            blocked = _blocked;
            _blocked = 0;
        }
        if (blocked > 0)
        {
            logger.LogWarning("Rejected {Count} connections due to TLS rate limiting", blocked);
        }
    }
}
