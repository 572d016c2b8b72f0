namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private readonly record struct UpdateEvent(long Msgs, long Bytes, ulong Seq, string Subject);

    // Events are collected under the store lock and delivered after it is released, so a handler may
    // take the stream's own lock (or call back into the store) without a lock-order deadlock.
    private readonly List<UpdateEvent> _events = [];
    private readonly Lock _deliverLock = new();
    private UpdateEvent[] _deliverBuffer = new UpdateEvent[16];

    protected void QueueEvent(long msgs, long bytes, ulong seq, string subject)
    {
        if (_onUpdate is not null)
            _events.Add(new UpdateEvent(msgs, bytes, seq, subject));
    }

    protected void FireEvents()
    {
        var handler = _onUpdate;
        if (handler is null)
            return;
        lock (_deliverLock)
        {
            int n;
            lock (Sync)
            {
                n = _events.Count;
                if (n == 0)
                    return;
                if (_deliverBuffer.Length < n)
                    _deliverBuffer = new UpdateEvent[Math.Max(n, _deliverBuffer.Length * 2)];
                _events.CopyTo(_deliverBuffer);
                _events.Clear();
            }
            for (var i = 0; i < n; i++)
            {
                var e = _deliverBuffer[i];
                handler(e.Msgs, e.Bytes, e.Seq, e.Subject);
            }
        }
    }
}
