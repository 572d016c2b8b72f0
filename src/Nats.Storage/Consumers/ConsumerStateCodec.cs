namespace Nats.Storage.Consumers;

/// <summary>
/// Consumer state in the Go server's binary layout: magic 22, version, then uvarints ack floor
/// (consumer, stream), delivered (consumer, stream), pending count [, base time, per entry: stream seq
/// minus ack floor, consumer seq minus ack floor, base minus time], redelivered count [, per entry:
/// stream seq minus ack floor, count]. Version 2 is Go's (times in whole seconds below a base of "now");
/// version 100 is ours for persistence, with exact nanosecond times (base 0).
/// </summary>
internal static class ConsumerStateCodec
{
    public const byte Magic = 22;
    public const byte GoVersion = 2;
    public const byte ExactVersion = 100;

    public static byte[] Encode(ConsumerState state, bool exact, long nowUnixNs)
    {
        var buf = new List<byte>(16 + state.Pending.Count * 12 + state.Redelivered.Count * 6)
        {
            Magic, exact ? ExactVersion : GoVersion,
        };
        Varint.Put(buf, state.AckFloor.Consumer);
        Varint.Put(buf, state.AckFloor.Stream);
        Varint.Put(buf, state.Delivered.Consumer);
        Varint.Put(buf, state.Delivered.Stream);
        Varint.Put(buf, (ulong)state.Pending.Count);
        var asflr = state.AckFloor.Stream;
        var adflr = state.AckFloor.Consumer;
        if (state.Pending.Count > 0)
        {
            // Go rounds "now" to the second as the base and stores each time as seconds below it.
            var mints = exact ? 0 : (long)Math.Round(nowUnixNs / 1e9);
            Varint.PutSigned(buf, mints);
            foreach (var (sseq, p) in state.Pending)
            {
                Varint.Put(buf, sseq - asflr);
                Varint.Put(buf, p.Sequence - adflr);
                Varint.PutSigned(buf, mints - (exact ? p.Timestamp : p.Timestamp / 1_000_000_000));
            }
        }
        Varint.Put(buf, (ulong)state.Redelivered.Count);
        foreach (var (sseq, n) in state.Redelivered)
        {
            Varint.Put(buf, sseq - asflr);
            Varint.Put(buf, n);
        }
        return [.. buf];
    }

    /// <summary>Decodes versions 1 and 2 (Go) and ours; null when the bytes are not a valid state.</summary>
    public static ConsumerState? Decode(ReadOnlySpan<byte> buf)
    {
        if (buf.Length < 2 || buf[0] != Magic || buf[1] is not (1 or GoVersion or ExactVersion))
        {
            return null;
        }

        var version = buf[1];
        var pos = 2;
        var state = new ConsumerState();
        var afc = Varint.Read(buf, ref pos);
        var afs = Varint.Read(buf, ref pos);
        var dc = Varint.Read(buf, ref pos);
        var ds = Varint.Read(buf, ref pos);
        if (pos < 0)
        {
            return null;
        }

        if (version == 1)
        {
            // Version 1 stored the next sequences to deliver; Go adjusts them down on decode.
            if (afc > 1)
            {
                afc--;
            }

            if (afs > 1)
            {
                afs--;
            }

            if (dc > 1)
            {
                dc--;
            }

            if (ds > 1)
            {
                ds--;
            }
        }
        const ulong high = 1UL << 63;
        if ((afs & high) != 0 || (ds & high) != 0)
        {
            return null;
        }

        state.AckFloor = new SequencePair(afc, afs);
        state.Delivered = new SequencePair(dc, ds);
        var numPending = Varint.Read(buf, ref pos);
        if (pos < 0 || numPending > (ulong)buf.Length)
        {
            return null;
        }

        if (numPending > 0)
        {
            var mints = Varint.ReadSigned(buf, ref pos);
            for (ulong i = 0; i < numPending; i++)
            {
                var sseq = Varint.Read(buf, ref pos) + afs;
                var dseq = version == 1 ? 0 : Varint.Read(buf, ref pos) + afc;
                var ts = Varint.ReadSigned(buf, ref pos);
                if (pos < 0 || sseq == 0)
                {
                    return null;
                }

                ts = version switch
                {
                    1 => (ts + mints) * 1_000_000_000,
                    GoVersion => (mints - ts) * 1_000_000_000,
                    _ => mints - ts,
                };
                state.Pending[sseq] = new PendingDelivery(dseq, ts);
            }
        }
        var numRedelivered = Varint.Read(buf, ref pos);
        if (pos < 0 || numRedelivered > (ulong)buf.Length)
        {
            return null;
        }

        for (ulong i = 0; i < numRedelivered; i++)
        {
            var seq = Varint.Read(buf, ref pos);
            var n = Varint.Read(buf, ref pos);
            if (pos < 0)
            {
                return null;
            }

            if (seq > 0 && n > 0)
            {
                state.Redelivered[seq + afs] = n;
            }
        }
        return state;
    }
}
