namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private readonly record struct UpdateEvent(long Msgs, long Bytes, ulong Seq, string Subject, RemovalReason Reason);

    // Events are collected under the store lock and delivered after it is released, so a handler may
    // take the stream's own lock (or call back into the store) without a lock-order deadlock.
    private readonly List<UpdateEvent> _events = [];
    private readonly Lock _deliverLock = new();
    private UpdateEvent[] _deliverBuffer = new UpdateEvent[16];
    private StorageRemovalHandler? _onRemoval;

    public void RegisterStorageRemovals(StorageRemovalHandler? handler) => _onRemoval = handler;

    private bool HasHandlers => _onUpdate is not null || _onRemoval is not null;

    protected void QueueEvent(long msgs, long bytes, ulong seq, string subject, RemovalReason reason = RemovalReason.Removed)
    {
        if (HasHandlers)
        {
            _events.Add(new UpdateEvent(msgs, bytes, seq, subject, reason));
        }
    }

    protected void FireEvents()
    {
        var handler = _onUpdate;
        var removal = _onRemoval;
        if (handler is null && removal is null)
        {
            return;
        }

        lock (_deliverLock)
        {
            int n;
            lock (Sync)
            {
                n = _events.Count;
                if (n == 0)
                {
                    return;
                }

                if (_deliverBuffer.Length < n)
                {
                    _deliverBuffer = new UpdateEvent[Math.Max(n, _deliverBuffer.Length * 2)];
                }

                _events.CopyTo(_deliverBuffer);
                _events.Clear();
            }
            for (var i = 0; i < n; i++)
            {
                var e = _deliverBuffer[i];
                handler?.Invoke(e.Msgs, e.Bytes, e.Seq, e.Subject);
                if (e.Msgs < 0)
                {
                    removal?.Invoke(e.Seq, e.Subject, e.Reason);
                }
            }
        }
    }
}
