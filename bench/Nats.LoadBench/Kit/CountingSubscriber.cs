using System.Diagnostics;
using NATS.Client.Core;

namespace Nats.LoadBench.Kit;

/// <summary>
/// A NATS.Net subscription that counts deliveries of the expected size. The count and a timestamp
/// are published once per batch the channel hands over, so the per-message cost is a compare
/// and an increment on top of NATS.Net's own. Empty messages are the gateway and leaf rows' interest probes
/// (<see cref="InterestProbe"/>): counted apart, never as deliveries.
/// </summary>
internal sealed class CountingSubscriber
{
    private readonly INatsSub<int> _sub;
    private readonly int _payloadSize;
    private long _count;
    private long _wrongSize;
    private long _probes;
    private long _lastTicks;

    private CountingSubscriber(INatsSub<int> sub, int payloadSize)
    {
        _sub = sub;
        _payloadSize = payloadSize;
    }

    public long Count => Volatile.Read(ref _count);

    public long WrongSize => Volatile.Read(ref _wrongSize);

    /// <summary>Empty messages (interest probes) received.</summary>
    public long Probes => Volatile.Read(ref _probes);

    /// <summary>When the last counted delivery arrived (Stopwatch ticks).</summary>
    public long LastTicks => Volatile.Read(ref _lastTicks);

    /// <summary>Subscribes and returns once the server has processed the SUB (a PING round trip).</summary>
    public static async Task<CountingSubscriber> StartAsync(NatsConnection conn, string subject, int payloadSize, string? queueGroup = null)
    {
        var sub = await conn.SubscribeCoreAsync(subject, queueGroup, PayloadLength.Instance);
        await conn.PingAsync();
        var counter = new CountingSubscriber(sub, payloadSize);
        _ = Task.Run(counter.ReadAsync);
        return counter;
    }

    private async Task ReadAsync()
    {
        var reader = _sub.Msgs;
        long count = 0;
        long wrong = 0;
        long probes = 0;
        try
        {
            while (await reader.WaitToReadAsync())
            {
                while (reader.TryRead(out var msg))
                {
                    if (msg.Data == _payloadSize)
                    {
                        count++;
                    }
                    else if (msg.Data == 0)
                    {
                        probes++;
                    }
                    else
                    {
                        wrong++;
                    }
                }

                Volatile.Write(ref _lastTicks, Stopwatch.GetTimestamp());
                Volatile.Write(ref _count, count);
                Volatile.Write(ref _wrongSize, wrong);
                Volatile.Write(ref _probes, probes);
            }
        }
        catch (Exception ex) when (ex is System.Threading.Channels.ChannelClosedException or NatsException or OperationCanceledException)
        {
            // The subscription ended with its connection; RunContext reports the cut, the count shows the loss.
        }
    }

    public static long Total(IEnumerable<CountingSubscriber> subs) => subs.Sum(s => s.Count);
}
