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
/// operation under the lock (so the persisted order is the applied order) and returns the ticket of the
/// sync round that covers it; concurrent updates share rounds.
/// </summary>
internal abstract class ConsumerStoreBase : IConsumerStore
{
    protected readonly Lock Sync = new();
    protected readonly ConsumerTracker Tracker;
    protected bool Closed;
    private bool _stopped;

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
            {
                return Closed;
            }
        }
    }

    internal bool IsDeleted { get; private set; }

    public abstract StorageType Type { get; }

    public ConsumerStoreConfig Config
    {
        get
        {
            lock (Sync)
            {
                return Tracker.Config;
            }
        }
    }

    /// <summary>Persists an applied operation (under the lock).</summary>
    protected abstract DurabilityTicket Persist(ConsumerOp op, ulong a, ulong b, ulong c, long ts);

    /// <summary>Under the lock: a ticket covering everything persisted so far.</summary>
    protected abstract DurabilityTicket Current();

    protected virtual void OnStop() { }

    protected virtual void OnDelete() { }

    public DurabilityTicket SetStarting(ulong sseq) => Apply(ConsumerOp.SetStarting, sseq, 0, 0, 0, () => Tracker.SetStarting(sseq));

    public DurabilityTicket UpdateStarting(ulong sseq) => Apply(ConsumerOp.UpdateStarting, sseq, 0, 0, 0, () => Tracker.UpdateStarting(sseq));

    public bool HasState()
    {
        lock (Sync)
        {
            return Tracker.HasState;
        }
    }

    public DurabilityTicket UpdateDelivered(ulong dseq, ulong sseq, ulong dc, long ts)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            // An old replay changes nothing, but whatever it repeats may still be syncing.
            return Tracker.Delivered(dseq, sseq, dc, ts) ? Persist(ConsumerOp.Delivered, dseq, sseq, dc, ts) : Current();
        }
    }

    public DurabilityTicket UpdateAcks(ulong dseq, ulong sseq)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            var hadRedelivered = Tracker.State.Redelivered.ContainsKey(sseq);
            try
            {
                if (!Tracker.Ack(dseq, sseq))
                {
                    return Current();
                }
            }
            catch (StoreException e) when (e.Error == StoreError.MsgNotFound && hadRedelivered)
            {
                // Not pending, but its redelivery count was dropped: log that so replay agrees.
                Persist(ConsumerOp.Ack, dseq, sseq, 0, 0);
                throw;
            }
            return Persist(ConsumerOp.Ack, dseq, sseq, 0, 0);
        }
    }

    public DurabilityTicket UpdateConfig(ConsumerStoreConfig config)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            Tracker.Config = config;
            return PersistConfig(config);
        }
    }

    public DurabilityTicket Update(ConsumerState state)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            Tracker.Replace(state);
            return PersistState();
        }
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
        if (Close(out var inFlight))
        {
            Finish(inFlight, delete: false);
        }
    }

    public void Delete()
    {
        Close(out var inFlight);
        Finish(inFlight, delete: true);
    }

    /// <summary>Refuses further updates; returns false when already closed.</summary>
    private bool Close(out DurabilityTicket inFlight)
    {
        lock (Sync)
        {
            inFlight = Closed ? DurabilityTicket.Completed : Current();
            if (Closed)
            {
                return false;
            }

            Closed = true;
            return true;
        }
    }

    // The sync round in flight needs the lock, so it is awaited outside it; nothing can join it now.
    private void Finish(DurabilityTicket inFlight, bool delete)
    {
        try
        {
            inFlight.Wait();
        }
        catch (Exception) when (delete)
        {
        }
        lock (Sync)
        {
            if (!_stopped)
            {
                _stopped = true;
                OnStop();
            }
            if (delete && !IsDeleted)
            {
                IsDeleted = true;
                OnDelete();
            }
        }
    }

    public void Dispose() => Stop();

    protected abstract DurabilityTicket PersistConfig(ConsumerStoreConfig config);

    protected abstract DurabilityTicket PersistState();

    private DurabilityTicket Apply(ConsumerOp op, ulong a, ulong b, ulong c, long ts, Action apply)
    {
        lock (Sync)
        {
            ThrowIfClosed();
            apply();
            return Persist(op, a, b, c, ts);
        }
    }

    protected void ThrowIfClosed()
    {
        if (Closed)
        {
            throw new StoreException(StoreError.Closed);
        }
    }

    protected static long UnixNowNs() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;
}
