using System.Globalization;

namespace Nats.Server.JetStream.Consumers;

/// <summary>sample_freq: Go's shouldSample/sampleAck, a <c>$JS.EVENT.METRIC.CONSUMER.ACK</c> metric for a share of the explicit acks.</summary>
internal sealed partial class JsConsumer
{
    /// <summary>Called for every ack before it is processed; samples +ACK, +OK, an empty ack and +NXT (not +TERM, -NAK, +WPI), as Go's processAck does.</summary>
    private void SampleAck(ulong sseq, ulong dseq, ulong dc, ReadOnlySpan<byte> body)
    {
        if (_config.SampleFrequency is null || _config.AckPolicy != AckPolicyKind.Explicit)
        {
            return;
        }
        if (!(body.IsEmpty || body.SequenceEqual("+ACK"u8) || body.SequenceEqual("+OK"u8) || body.StartsWith("+NXT"u8)))
        {
            return;
        }
        long delivered;
        lock (_lock)
        {
            if (!_pending.TryGetValue(sseq, out var pending) || !ShouldSample(SampleFrequency(_config.SampleFrequency)))
            {
                return;
            }
            delivered = pending.Timestamp;
        }
        var now = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
        ConsumerAdvisories.AckMetric(this, sseq, dseq, dc, now - delivered);
    }

    /// <summary>"50%" or "50"; the config check already refused anything else.</summary>
    internal static int SampleFrequency(string text)
    {
        var number = text.EndsWith('%') ? text.AsSpan(0, text.Length - 1) : text.AsSpan();
        return int.TryParse(number, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var percent) ? percent : 0;
    }

    /// <summary>Go's shouldSample: never at 0, always from 100, else rand.Int31n(100) &lt;= freq (so "50" samples 51 of 100).</summary>
    internal static bool ShouldSample(int frequency) =>
        frequency > 0 && (frequency >= 100 || Random.Shared.Next(100) <= frequency);
}
