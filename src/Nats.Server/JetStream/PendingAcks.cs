namespace Nats.Server.JetStream;

/// <summary>
/// PubAcks waiting for one group commit round: every publish covered by the same durability ticket
/// joins one batch, and when the round completes a single continuation sends the whole batch under one
/// publish lock with one write per receiving client. Reply subjects are copied into one reused buffer,
/// so a waiting ack allocates nothing in steady state.
/// </summary>
internal sealed class PendingAcks(Action<PendingAcks.Batch> send)
{
    private readonly Lock _lock = new();
    private Batch? _open;

    // More than one: group commit keeps up to two rounds syncing while a third fills, so a single spare
    // was taken by the filling round while the others were out, and every round built a new batch
    // (~6 KB of buffers, thousands of rounds per second under load).
    private const int MaxSpares = 4;
    private readonly Stack<Batch> _spares = new();

    /// <summary>Queues the ack of <paramref name="seq"/> to <paramref name="reply"/> until <paramref name="durable"/> completes
    /// (<paramref name="duplicate"/>: the answer to a publish whose Nats-Msg-Id matched the stored <paramref name="seq"/>).</summary>
    public void Add(Task durable, ReadOnlySpan<byte> reply, ulong seq, bool duplicate)
    {
        lock (_lock)
        {
            var batch = _open;
            if (batch is null || !ReferenceEquals(batch.Durable, durable))
            {
                batch = _spares.Count > 0 ? _spares.Pop() : new Batch();
                batch.Durable = durable;
                _open = batch;
                batch.Owner = this;
                batch.Add(reply, seq, duplicate);
                durable.ContinueWith(static (_, state) => ((PendingAcks.Batch)state!).Owner!.Complete((PendingAcks.Batch)state), batch,
                    CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
                return;
            }
            batch.Add(reply, seq, duplicate);
        }
    }

    private void Complete(Batch batch)
    {
        lock (_lock)
        {
            // From here on no publish joins this batch: a later one with the same ticket starts a new batch.
            if (ReferenceEquals(_open, batch))
            {
                _open = null;
            }
        }
        try
        {
            send(batch);
        }
        finally
        {
            batch.Clear();
            lock (_lock)
            {
                if (_spares.Count < MaxSpares)
                {
                    _spares.Push(batch);
                }
            }
        }
    }

    internal sealed class Batch
    {
        private byte[] _replies = new byte[4096];
        private int _used;
        private (int Offset, int Length, ulong Seq, bool Duplicate)[] _entries = new (int, int, ulong, bool)[64];

        public Task Durable = Task.CompletedTask;
        public PendingAcks? Owner;

        public int Count { get; private set; }

        public ReadOnlySpan<byte> Reply(int index) => _replies.AsSpan(_entries[index].Offset, _entries[index].Length);

        public ulong Seq(int index) => _entries[index].Seq;

        public bool Duplicate(int index) => _entries[index].Duplicate;

        public void Add(ReadOnlySpan<byte> reply, ulong seq, bool duplicate)
        {
            if (_used + reply.Length > _replies.Length)
            {
                Array.Resize(ref _replies, Math.Max(_replies.Length * 2, _used + reply.Length));
            }
            if (Count == _entries.Length)
            {
                Array.Resize(ref _entries, _entries.Length * 2);
            }
            reply.CopyTo(_replies.AsSpan(_used));
            _entries[Count++] = (_used, reply.Length, seq, duplicate);
            _used += reply.Length;
        }

        public void Clear()
        {
            _used = 0;
            Count = 0;
            Durable = Task.CompletedTask;
        }
    }
}
