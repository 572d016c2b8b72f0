namespace Nats.Server.Clients;

/// <summary>
/// The end of a read batch: every client that got data from it is flushed once, by this read loop
/// itself when its queue can be written without blocking (see <see cref="OutboundQueue.TryFlushInline"/>),
/// or else by waking its write loop.
/// </summary>
internal sealed partial class ClientConnection
{
    /// <summary>Wakes or writes for every client that got data in this read batch.</summary>
    private void FlushPendingClients()
    {
        for (var i = 0; i < _pendingClientCount; i++)
        {
            var client = _pendingClients[i];
            _pendingClients[i] = null!;
            if (!client._outbound.TryFlushInline())
            {
                client._outbound.SignalFlush();
            }
        }
        _pendingClientCount = 0;
        _batchId = 0;
    }
}
