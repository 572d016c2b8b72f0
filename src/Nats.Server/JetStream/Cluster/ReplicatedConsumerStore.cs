using Nats.Storage;
using Nats.Storage.Consumers;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A replicated consumer's store on its leader: every change goes to the local store at once and, encoded as Go's
/// consumer ops, into a batch that the group proposes when its RAFT loop next runs, so one entry carries everything a
/// delivery pass or a burst of acks changed. The ticket of a change completes when its batch is committed (fsynced on
/// a quorum), so a double ack is confirmed only once the acknowledgement survives the loss of any one replica.
/// </summary>
internal sealed class ReplicatedConsumerStore(IConsumerStore inner, ConsumerGroup group) : IConsumerStore
{
    private readonly Lock _lock = new();
    private byte[] _batch = new byte[1024];
    private int _length;
    private TaskCompletionSource? _batchDone;

    public IConsumerStore Inner => inner;

    public string Name => inner.Name;

    public StorageType Type => inner.Type;

    public ConsumerStoreConfig Config => inner.Config;

    public DurabilityTicket SetStarting(ulong sseq)
    {
        inner.SetStarting(sseq);
        return AppendSkip(sseq);
    }

    public DurabilityTicket UpdateStarting(ulong sseq)
    {
        inner.UpdateStarting(sseq);
        return AppendSkip(sseq);
    }

    public bool HasState() => inner.HasState();

    public DurabilityTicket UpdateDelivered(ulong dseq, ulong sseq, ulong dc, long ts)
    {
        inner.UpdateDelivered(dseq, sseq, dc, ts);
        lock (_lock)
        {
            _length += ConsumerOps.WriteDelivered(Room(), dseq, sseq, dc, ts);
            return Pending();
        }
    }

    public DurabilityTicket UpdateAcks(ulong dseq, ulong sseq)
    {
        inner.UpdateAcks(dseq, sseq);
        lock (_lock)
        {
            _length += ConsumerOps.WriteAck(Room(), dseq, sseq);
            return Pending();
        }
    }

    // The config travels in the meta group's consumer assignment; every replica applies it from there.
    public DurabilityTicket UpdateConfig(ConsumerStoreConfig config) => inner.UpdateConfig(config);

    public DurabilityTicket Update(ConsumerState state) => inner.Update(state);

    public ConsumerState State() => inner.State();

    public byte[] EncodedState() => inner.EncodedState();

    public void Stop() => inner.Stop();

    public void Delete() => inner.Delete();

    public void Dispose() => inner.Dispose();

    private DurabilityTicket AppendSkip(ulong sseq)
    {
        lock (_lock)
        {
            _length += ConsumerOps.WriteSkip(Room(), sseq);
            return Pending();
        }
    }

    /// <summary>Under the lock: space for one more op.</summary>
    private Span<byte> Room()
    {
        if (_batch.Length - _length < ConsumerOps.MaxLength)
        {
            Array.Resize(ref _batch, _batch.Length * 2);
        }
        return _batch.AsSpan(_length);
    }

    /// <summary>Under the lock: the ticket of the batch being filled; the first op of a batch asks the group to propose it.</summary>
    private DurabilityTicket Pending()
    {
        if (_batchDone is null)
        {
            _batchDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            group.ProposeSoon(this);
        }
        return new DurabilityTicket(_batchDone.Task);
    }

    /// <summary>On the group's loop: the batch so far and its completion, leaving an empty one to fill.</summary>
    public (byte[] Batch, TaskCompletionSource? Done) Take()
    {
        lock (_lock)
        {
            var batch = _batch.AsSpan(0, _length).ToArray();
            var done = _batchDone;
            _length = 0;
            _batchDone = null;
            if (_batch.Length > 64 * 1024)
            {
                // A burst grew it: do not keep the memory.
                _batch = new byte[1024];
            }
            return (batch, done);
        }
    }
}
