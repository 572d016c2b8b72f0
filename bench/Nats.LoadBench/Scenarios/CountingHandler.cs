using System.Diagnostics;
using Nats.LoadBench.Client;

namespace Nats.LoadBench.Scenarios;

/// <summary>Counts deliveries of the expected size; publishes the count and a timestamp once per
/// socket read so the per-message cost is an increment and a compare.</summary>
internal sealed class CountingHandler(int payloadSize) : IMsgHandler
{
    private long _local;
    private long _count;
    private long _lastTicks;

    public long Count => Volatile.Read(ref _count);

    public long LastTicks => Volatile.Read(ref _lastTicks);

    public long WrongSize { get; private set; }

    public void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        if (payload.Length == payloadSize)
        {
            _local++;
        }
        else
        {
            WrongSize++;
        }
    }

    public void OnBatchEnd()
    {
        if (_local != _count)
        {
            Volatile.Write(ref _lastTicks, Stopwatch.GetTimestamp());
            Volatile.Write(ref _count, _local);
        }
    }

    /// <summary>Used by the MQTT reader, which has no NATS frames.</summary>
    public void OnPayload(int length)
    {
        if (length == payloadSize)
        {
            _local++;
        }
        else
        {
            WrongSize++;
        }
    }
}
