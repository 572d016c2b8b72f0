namespace Nats.Storage.Consumers;

/// <summary>
/// The consumer state machine both engines share (the rules of Go's consumerMemStore), so a file store
/// replaying its log reaches exactly the state the live store had. Not thread-safe: the owning store locks.
/// </summary>
internal sealed class ConsumerTracker(ConsumerStoreConfig config)
{
    public ConsumerStoreConfig Config { get; set; } = config;

    public ConsumerState State { get; private set; } = new();

    public bool HasState => State.Delivered.Consumer != 0 || State.Delivered.Stream != 0;

    public void SetStarting(ulong sseq) => State.Delivered = State.Delivered with { Stream = sseq };

    public void UpdateStarting(ulong sseq)
    {
        if (sseq <= State.Delivered.Stream)
        {
            return;
        }

        State.Delivered = State.Delivered with { Stream = sseq };
        if (Config.AckPolicy == AckPolicy.None)
        {
            State.AckFloor = State.AckFloor with { Stream = sseq };
        }
    }

    /// <summary>False when the update changed nothing (an old replay), so it need not be persisted.</summary>
    public bool Delivered(ulong dseq, ulong sseq, ulong dc, long ts)
    {
        if (dc != 1 && Config.AckPolicy == AckPolicy.None)
        {
            throw new StoreException(StoreError.NoAckPolicy);
        }

        var st = State;
        // A replay older than what is already acknowledged changes nothing.
        if (dseq <= st.AckFloor.Consumer)
        {
            return false;
        }

        if (Config.AckPolicy == AckPolicy.None)
        {
            // Nothing is ever pending: delivered is acknowledged.
            if (dseq > st.Delivered.Consumer)
            {
                st.Delivered = st.Delivered with { Consumer = dseq };
                st.AckFloor = st.AckFloor with { Consumer = dseq };
            }
            if (sseq > st.Delivered.Stream)
            {
                st.Delivered = st.Delivered with { Stream = sseq };
                st.AckFloor = st.AckFloor with { Stream = sseq };
            }
            return true;
        }
        if (sseq <= st.Delivered.Stream)
        {
            // A redelivery keeps the original consumer sequence and refreshes the time.
            if (st.Pending.TryGetValue(sseq, out var p))
            {
                st.Pending[sseq] = p with { Timestamp = ts };
            }
        }
        else
        {
            st.Pending[sseq] = new PendingDelivery(dseq, ts);
        }
        if (dseq > st.Delivered.Consumer)
        {
            st.Delivered = st.Delivered with { Consumer = dseq };
        }

        if (sseq > st.Delivered.Stream)
        {
            st.Delivered = st.Delivered with { Stream = sseq };
        }

        if (dc > 1)
        {
            if (Config.MaxDeliver > 0 && dc > (ulong)Config.MaxDeliver)
            {
                st.Pending.Remove(sseq);
            }

            if (st.Redelivered.GetValueOrDefault(sseq) < dc - 1)
            {
                st.Redelivered[sseq] = dc - 1;
            }
        }
        return true;
    }

    /// <summary>Applies an acknowledgement; false when it was older than the ack floor (nothing changed).</summary>
    public bool Ack(ulong dseq, ulong sseq)
    {
        if (Config.AckPolicy == AckPolicy.None)
        {
            throw new StoreException(StoreError.NoAckPolicy);
        }

        var st = State;
        if (dseq <= st.AckFloor.Consumer)
        {
            return false;
        }

        if (!st.Pending.TryGetValue(sseq, out var p))
        {
            st.Redelivered.Remove(sseq);
            throw new StoreException(StoreError.MsgNotFound);
        }
        if (Config.AckPolicy == AckPolicy.All)
        {
            // Everything up to sseq is acknowledged at once.
            var gap = sseq - st.AckFloor.Stream;
            st.AckFloor = new SequencePair(dseq, sseq);
            if (gap > (ulong)st.Pending.Count)
            {
                foreach (var seq in st.Pending.Keys.Where(s => s <= sseq).ToArray())
                {
                    st.Pending.Remove(seq);
                    st.Redelivered.Remove(seq);
                }
            }
            else
            {
                for (var seq = sseq; seq > sseq - gap && st.Pending.Count > 0; seq--)
                {
                    st.Pending.Remove(seq);
                    st.Redelivered.Remove(seq);
                }
            }
            return true;
        }
        st.Pending.Remove(sseq);
        if (dseq > p.Sequence && p.Sequence > 0)
        {
            dseq = p.Sequence; // a redelivery is acknowledged under its original consumer sequence
        }

        if (st.Pending.Count == 0)
        {
            st.AckFloor = st.Delivered;
        }
        else if (dseq == st.AckFloor.Consumer + 1)
        {
            st.AckFloor = new SequencePair(dseq, sseq);
            // The floor moves up to just below the oldest delivery still pending.
            if (st.Delivered.Consumer > dseq)
            {
                for (var ss = sseq + 1; ss <= st.Delivered.Stream; ss++)
                {
                    if (st.Pending.TryGetValue(ss, out var next))
                    {
                        if (next.Sequence > 0)
                        {
                            st.AckFloor = new SequencePair(next.Sequence - 1, ss - 1);
                        }

                        break;
                    }
                }
            }
        }
        st.Redelivered.Remove(sseq);
        return true;
    }

    public void Replace(ConsumerState state)
    {
        Validate(state);
        if (state.Delivered.Consumer < State.Delivered.Consumer || state.AckFloor.Stream < State.AckFloor.Stream)
        {
            throw new StoreException(StoreError.InvalidArgument, "old update ignored");
        }

        State = state.Clone();
    }

    /// <summary>Recovery: takes a decoded snapshot as it is.</summary>
    public void Load(ConsumerState state) => State = state;

    private static void Validate(ConsumerState state)
    {
        if (state.AckFloor.Consumer > state.Delivered.Consumer)
        {
            throw new StoreException(StoreError.InvalidArgument, "bad ack floor for consumer");
        }

        if (state.AckFloor.Stream > state.Delivered.Stream)
        {
            throw new StoreException(StoreError.InvalidArgument, "bad ack floor for stream");
        }

        foreach (var seq in state.Pending.Keys)
        {
            if (seq <= state.AckFloor.Stream || seq > state.Delivered.Stream)
            {
                throw new StoreException(StoreError.InvalidArgument, $"bad pending entry, sequence [{seq}] out of range");
            }
        }
    }
}
