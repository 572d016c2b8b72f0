using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>
/// PubAcks (and publish errors) that are ready at once, collected on the publishing client's thread
/// while its read batch is open and sent when it closes: one publish lock and one write per receiving
/// client for the whole batch. Stores written in the batch are flushed to the operating system first,
/// so a buffered store still never acknowledges bytes a killed process would lose. One outbox per
/// thread; its buffers are reused, so a deferred ack allocates nothing in steady state.
/// </summary>
internal sealed class AckOutbox : IBatchEndListener
{
    [ThreadStatic]
    private static AckOutbox? t_current;

    private byte[] _bytes = new byte[8192];
    private int _used;
    private Entry[] _entries = new Entry[64];
    private int _count;
    private readonly List<IStreamStore> _stores = [];
    private bool _registered;

    private struct Entry
    {
        public JetStreamTransport Transport;
        public Account Account;
        public int Offset;
        public int ReplyLength;
        public int PayloadLength;
    }

    /// <summary>The outbox for the publisher's open <paramref name="batch"/>, or null when none is open (send at once).
    /// A batch runs to its end on one thread, so this thread's outbox serves it.</summary>
    public static AckOutbox? For(FlushBatch? batch)
    {
        if (batch is null || !batch.IsOpen)
        {
            return null;
        }
        var outbox = t_current ??= new AckOutbox();
        if (!outbox._registered)
        {
            outbox._registered = true;
            batch.AtEnd(outbox);
        }
        return outbox;
    }

    /// <summary>Flushes <paramref name="store"/>'s buffered writes before any ack of this batch is sent.</summary>
    public void FlushBefore(IStreamStore store)
    {
        if (_stores.Count > 0 && ReferenceEquals(_stores[^1], store))
        {
            return;
        }
        if (!_stores.Contains(store))
        {
            _stores.Add(store);
        }
    }

    /// <summary>Reserves room for an answer to <paramref name="reply"/>: the payload is written into the returned span
    /// (at most <paramref name="maxPayload"/> bytes) and its length passed to <see cref="Commit"/>.</summary>
    public Span<byte> Begin(ReadOnlySpan<byte> reply, int maxPayload)
    {
        var need = _used + reply.Length + maxPayload;
        if (need > _bytes.Length)
        {
            Array.Resize(ref _bytes, Math.Max(_bytes.Length * 2, need));
        }
        reply.CopyTo(_bytes.AsSpan(_used));
        return _bytes.AsSpan(_used + reply.Length, maxPayload);
    }

    public void Commit(JetStreamTransport transport, Account account, int replyLength, int payloadLength)
    {
        if (_count == _entries.Length)
        {
            Array.Resize(ref _entries, _entries.Length * 2);
        }
        _entries[_count++] = new Entry
        {
            Transport = transport,
            Account = account,
            Offset = _used,
            ReplyLength = replyLength,
            PayloadLength = payloadLength,
        };
        _used += replyLength + payloadLength;
    }

    public void Add(JetStreamTransport transport, Account account, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> payload)
    {
        payload.CopyTo(Begin(reply, payload.Length));
        Commit(transport, account, reply.Length, payload.Length);
    }

    public void OnBatchEnd()
    {
        _registered = false;
        try
        {
            foreach (var store in _stores)
            {
                store.FlushAllPending();
            }
            Send();
        }
        finally
        {
            _stores.Clear();
            Array.Clear(_entries, 0, _count); // no server kept alive by a thread's outbox
            _count = 0;
            _used = 0;
        }
    }

    private void Send()
    {
        var i = 0;
        while (i < _count)
        {
            // Entries of one server share its transport (a thread reads one client at a time, so in practice all of them).
            var transport = _entries[i].Transport;
            using var publish = transport.BeginBatch();
            for (; i < _count && ReferenceEquals(_entries[i].Transport, transport); i++)
            {
                ref var e = ref _entries[i];
                var reply = _bytes.AsSpan(e.Offset, e.ReplyLength);
                var payload = _bytes.AsSpan(e.Offset + e.ReplyLength, e.PayloadLength);
                publish.Publish(e.Account, reply, payload);
            }
        }
    }
}
