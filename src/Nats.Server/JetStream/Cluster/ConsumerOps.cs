using Nats.Storage;
using Nats.Storage.Consumers;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's consumer group ops: updateDeliveredOp 7 (uvarint dseq, sseq, dc, varint ts), updateAcksOp 8 (uvarint dseq,
/// sseq) and updateSkipOp 10 (uvarint sseq). Go proposes one op per entry; we propose a batch (the ops of one
/// delivery pass or ack burst, concatenated: each op is self-delimiting), so a Go peer would read only the first.
/// </summary>
internal static class ConsumerOps
{
    public const byte Delivered = 7;

    public const byte Acks = 8;

    public const byte Skip = 10;

    /// <summary>The longest op: the op byte and four 10-byte varints.</summary>
    public const int MaxLength = 1 + (4 * 10);

    public static int WriteDelivered(Span<byte> to, ulong dseq, ulong sseq, ulong dc, long ts)
    {
        to[0] = Delivered;
        var at = 1;
        at += Put(to[at..], dseq);
        at += Put(to[at..], sseq);
        at += Put(to[at..], dc);
        var zigzag = (ulong)ts << 1;
        at += Put(to[at..], ts < 0 ? ~zigzag : zigzag);
        return at;
    }

    public static int WriteAck(Span<byte> to, ulong dseq, ulong sseq)
    {
        to[0] = Acks;
        var at = 1;
        at += Put(to[at..], dseq);
        at += Put(to[at..], sseq);
        return at;
    }

    public static int WriteSkip(Span<byte> to, ulong sseq)
    {
        to[0] = Skip;
        return 1 + Put(to[1..], sseq);
    }

    private static int Put(Span<byte> to, ulong value)
    {
        var at = 0;
        while (value >= 0x80)
        {
            to[at++] = (byte)(value | 0x80);
            value >>= 7;
        }
        to[at++] = (byte)value;
        return at;
    }

    /// <summary>
    /// Applies a batch to a follower's store in order; an op the store refuses (an ack of something not pending: the
    /// log is replayed after a restart) changes nothing. Returns the ops applied; a malformed tail is ignored.
    /// </summary>
    /// <param name="acked">When given, collects the stream sequences of the acks applied (interest and work-queue
    /// retention removes them from this replica's stream, as Go's processReplicatedAck).</param>
    public static int Apply(ReadOnlySpan<byte> batch, IConsumerStore store, List<ulong>? acked = null)
    {
        var applied = 0;
        var at = 0;
        while (at < batch.Length)
        {
            var op = batch[at++];
            try
            {
                switch (op)
                {
                    case Delivered:
                        var dseq = Varint.Read(batch, ref at);
                        var sseq = Varint.Read(batch, ref at);
                        var dc = Varint.Read(batch, ref at);
                        var ts = Varint.ReadSigned(batch, ref at);
                        if (at < 0)
                        {
                            return applied;
                        }
                        store.UpdateDelivered(dseq, sseq, dc, ts);
                        break;
                    case Acks:
                        var ackDseq = Varint.Read(batch, ref at);
                        var ackSseq = Varint.Read(batch, ref at);
                        if (at < 0)
                        {
                            return applied;
                        }
                        store.UpdateAcks(ackDseq, ackSseq);
                        acked?.Add(ackSseq);
                        break;
                    case Skip:
                        var skip = Varint.Read(batch, ref at);
                        if (at < 0)
                        {
                            return applied;
                        }
                        store.UpdateStarting(skip);
                        break;
                    default:
                        return applied;
                }
            }
            catch (StoreException)
            {
                // Already acknowledged, or not pending here: the op changes nothing.
            }
            applied++;
        }
        return applied;
    }
}
