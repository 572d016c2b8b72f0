using Nats.Storage;

namespace Nats.Server.JetStream.Consumers;

/// <summary>The delivery loop's hooks into <see cref="DeliveryPacer"/> (replay_policy original, rate_limit_bps).</summary>
internal sealed partial class JsConsumer
{
    // A held message of a last_per_subject start cannot go back into its queue: it waits here.
    private ulong _pacedLastPerSubject;

    /// <summary>Go's burst for the rate limiter: the stream's max_msg_size, else the account's max payload, else the server's.</summary>
    private long RateBurst()
    {
        if (Stream.Config.MaxMsgSize > 0)
        {
            return Stream.Config.MaxMsgSize;
        }
        var accountPayload = Account.Options.Limits.MaxPayload;
        return accountPayload > 0 ? accountPayload : Stream.Account.Service.Server.Options.MaxPayload;
    }

    /// <summary>Milliseconds the message must wait, or 0 to deliver it now. A waiting message is put back so the
    /// next pass gets it first. The size is Go's: subject, ack reply, headers and payload.</summary>
    private long PaceMillis(StoredMessage message, ulong dc, int size, ulong pending)
    {
        if (!_pacer.Engaged)
        {
            return 0;
        }
        var seq = message.Sequence;
        var ackReply = 12 + Stream.Name.Length + Name.Length
            + Digits(dc) + Digits(seq) + Digits(_dseq) + Digits((ulong)message.Timestamp) + Digits(pending);
        var wait = _pacer.DelayMillis(seq, dc, message.Timestamp, size + ackReply);
        if (wait > 0)
        {
            if (dc > 1 || (_lastPerSubject is null && _sseq == seq + 1))
            {
                Unget(seq, dc);
            }
            else
            {
                _pacedLastPerSubject = seq;
            }
        }
        return wait;
    }

    /// <summary>A held message of a last_per_subject start, if still there.</summary>
    private (StoredMessage? Message, ulong Dc)? TakePaced()
    {
        var seq = _pacedLastPerSubject;
        if (seq == 0)
        {
            return null;
        }
        _pacedLastPerSubject = 0;
        return Stream.Store.LoadMsg(seq, _message) is { } held ? (held, 1) : null;
    }

    private static int Digits(ulong value)
    {
        var digits = 1;
        while (value >= 10)
        {
            value /= 10;
            digits++;
        }
        return digits;
    }
}
