namespace Nats.Storage.Consumers;

/// <summary>Operations a consumer store persists, in the order they were applied.</summary>
internal enum ConsumerOp : byte
{
    Delivered = 1,
    Ack = 2,
    SetStarting = 3,
    UpdateStarting = 4,
    /// <summary>The whole state (Update, or a snapshot of the log).</summary>
    State = 5,
    Config = 6,
}

/// <summary>
/// Locking, validation and the shared state machine for both engines. An engine persists each applied
/// operation under the lock (so the persisted order is the applied order) and returns a position; the
/// caller then waits, outside the lock, until that position is durable, so concurrent updates share syncs.
/// </summary>
internal abstract class ConsumerStoreBase : IConsumerStore
{
    protected readonly Lock Sync = new();
    protected readonly ConsumerTracker Tracker;
    protected bool Closed;

    protected ConsumerStoreBase(string name, ConsumerStoreConfig config)
    {
        Name = name;
        Tracker = new ConsumerTracker(config);
    }

    public string Name { get; }

    internal bool IsClosed
    {
        get
        {
            lock (Sync)
                return Closed;
        }
    }

    internal bool IsDeleted { get; private set; }

    public abstract StorageType Type { get; }

    public ConsumerStoreConfig Config
    {
        get
        {
            lock (Sync)
                return Tracker.Config;
        }
    }

    /// <summary>Persists an applied operation; returns a position to wait on (0: nothing to wait for).</summary>
    protected abstract long Persist(ConsumerOp op, ulong a, ulong b, ulong c, long ts);

    protected abstract void WaitDurable(long position);

    protected virtual void OnStop() { }

    protected virtual void OnDelete() { }

    public void SetStarting(ulong sseq) => Apply(ConsumerOp.SetStarting, sseq, 0, 0, 0, () => Tracker.SetStarting(sseq));

    public void UpdateStarting(ulong sseq) => Apply(ConsumerOp.UpdateStarting, sseq, 0, 0, 0, () => Tracker.UpdateStarting(sseq));

    public bool HasState()
    {
        lock (Sync)
            return Tracker.HasState;
    }

    public void UpdateDelivered(ulong dseq, ulong sseq, ulong dc, long ts)
    {
        long pos;
        lock (Sync)
        {
            ThrowIfClosed();
            if (!Tracker.Delivered(dseq, sseq, dc, ts))
                return;
            pos = Persist(ConsumerOp.Delivered, dseq, sseq, dc, ts);
        }
        WaitDurable(pos);
    }

    public void UpdateAcks(ulong dseq, ulong sseq)
    {
        long pos;
        lock (Sync)
        {
            ThrowIfClosed();
            var hadRedelivered = Tracker.State.Redelivered.ContainsKey(sseq);
            try
            {
                if (!Tracker.Ack(dseq, sseq))
                    return;
            }
            catch (StoreException e) when (e.Error == StoreError.MsgNotFound && hadRedelivered)
            {
                // Not pending, but its redelivery count was dropped: persist that before reporting.
                WaitDurable(Persist(ConsumerOp.Ack, dseq, sseq, 0, 0));
                throw;
            }
            pos = Persist(ConsumerOp.Ack, dseq, sseq, 0, 0);
        }
        WaitDurable(pos);
    }

    public void UpdateConfig(ConsumerStoreConfig config)
    {
        long pos;
        lock (Sync)
        {
            ThrowIfClosed();
            Tracker.Config = config;
            pos = PersistConfig(config);
        }
        WaitDurable(pos);
    }

    public void Update(ConsumerState state)
    {
        long pos;
        lock (Sync)
        {
            ThrowIfClosed();
            Tracker.Replace(state);
            pos = PersistState();
        }
        WaitDurable(pos);
    }

    public ConsumerState State()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            return Tracker.State.Clone();
        }
    }

    public byte[] EncodedState()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            return ConsumerStateCodec.Encode(Tracker.State, exact: false, UnixNowNs());
        }
    }

    public void Stop()
    {
        lock (Sync)
        {
            if (Closed)
                return;
            Closed = true;
            OnStop();
        }
    }

    public void Delete()
    {
        lock (Sync)
        {
            if (!Closed)
                OnStop();
            Closed = true;
            IsDeleted = true;
            OnDelete();
        }
    }

    public void Dispose() => Stop();

    protected abstract long PersistConfig(ConsumerStoreConfig config);

    protected abstract long PersistState();

    private void Apply(ConsumerOp op, ulong a, ulong b, ulong c, long ts, Action apply)
    {
        long pos;
        lock (Sync)
        {
            ThrowIfClosed();
            apply();
            pos = Persist(op, a, b, c, ts);
        }
        WaitDurable(pos);
    }

    protected void ThrowIfClosed()
    {
        if (Closed)
            throw new StoreException(StoreError.Closed);
    }

    protected static long UnixNowNs() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;
}
