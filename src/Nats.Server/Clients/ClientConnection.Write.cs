using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

/// <summary>
/// Getting queued bytes onto the wire. Two paths share one rule: only the holder of the sending
/// flag touches the socket's send side. The write loop drains asynchronously (and may block on a
/// slow reader); a publisher's read loop, at the end of its batch, first tries to write a
/// receiver's bytes itself with a non-blocking send, like Go's flushClients: this saves a thread
/// hop per message on request/reply paths. Whatever a non-blocking send cannot take is left for
/// the write loop.
/// </summary>
internal sealed partial class ClientConnection
{
    private const long InlineFlushMaxBytes = 64 * 1024;

    private readonly List<ArraySegment<byte>> _inFlight = [];
    private int _inFlightIndex;
    private int _inFlightOffset;
    private int _sending;
    private long _writeStartedTicks;

    /// <summary>Bytes taken off the queue but not yet written; they still count towards max_pending, as in Go.</summary>
    private long _inFlightBytes;

    /// <summary>Wakes or writes for every client that got data in this read batch.</summary>
    private void FlushPendingClients()
    {
        for (var i = 0; i < _pendingClientCount; i++)
        {
            var client = _pendingClients[i];
            _pendingClients[i] = null!;
            if (!client.TryFlushInline())
            {
                client.SignalFlush();
            }
        }
        _pendingClientCount = 0;
        _batchId = 0;
    }

    /// <summary>
    /// Writes queued bytes with a non-blocking send when nobody else is sending.
    /// Returns false when the write loop must take over (busy, large backlog, or the socket is full).
    /// </summary>
    private bool TryFlushInline()
    {
        if (!_transport.CanSendNow || IsClosed)
        {
            return false;
        }
        if (Interlocked.CompareExchange(ref _sending, 1, 0) != 0)
        {
            // Someone else is sending and may already be past its last look at the queue:
            // signal the writer so this data cannot be stranded.
            return false;
        }
        var handedOver = false;
        try
        {
            lock (_outLock)
            {
                if (_out.PendingBytes > InlineFlushMaxBytes || _inFlight.Count > 0)
                {
                    handedOver = true;
                    return false;
                }
                Volatile.Write(ref _inFlightBytes, _out.TakeAll(_inFlight));
            }
            while (_inFlightIndex < _inFlight.Count)
            {
                var segment = _inFlight[_inFlightIndex];
                var remaining = segment.AsSpan(_inFlightOffset);
                var sent = _transport.TrySendNow(remaining);
                if (sent < 0)
                {
                    CloseConnection(ClosedReason.WriteError);
                    return true;
                }
                if (sent < remaining.Length)
                {
                    _inFlightOffset += sent;
                    handedOver = true;
                    return false;
                }
                _inFlightIndex++;
                _inFlightOffset = 0;
                OnBufferWritten(segment.Count);
            }
            ReleaseInFlight();
            _out.ResetChunkSizeIfIdle(_outLock);
            Volatile.Write(ref _lastActivityTicks, Environment.TickCount64);
        }
        catch (ObjectDisposedException)
        {
            return true;
        }
        finally
        {
            Volatile.Write(ref _sending, 0);
        }
        // Data that arrived while we held the flag was signalled to a writer that found it busy.
        if (!handedOver && HasQueuedBytes())
        {
            return false;
        }
        return true;
    }

    private bool HasQueuedBytes()
    {
        lock (_outLock)
        {
            return !_out.IsEmpty;
        }
    }

    private void ReleaseInFlight()
    {
        Volatile.Write(ref _inFlightBytes, 0);
        OutboundBuffer.Release(_inFlight);
        _inFlightIndex = 0;
        _inFlightOffset = 0;
    }

    private async Task WriteLoopAsync()
    {
        try
        {
            while (true)
            {
                await _flushSignal.WaitAsync().ConfigureAwait(false);
                var closing = IsClosed;
                // Drained here rather than in a helper async method, so a wake-up allocates nothing.
                for (var pass = 0; pass < 2; pass++)
                {
                    while (TryTakeSendingFlag())
                    {
                        try
                        {
                            lock (_outLock)
                            {
                                Interlocked.Add(ref _inFlightBytes, _out.TakeAll(_inFlight));
                            }
                            if (_inFlightIndex >= _inFlight.Count)
                            {
                                ReleaseInFlight();
                                _out.ResetChunkSizeIfIdle(_outLock);
                                break;
                            }
                            Volatile.Write(ref _writeStartedTicks, Environment.TickCount64);
                            while (_inFlightIndex < _inFlight.Count)
                            {
                                var segment = _inFlight[_inFlightIndex];
                                var sent = await _transport.SendAsync(segment.AsMemory(_inFlightOffset), CancellationToken.None).ConfigureAwait(false);
                                _inFlightOffset += sent;
                                if (_inFlightOffset >= segment.Count)
                                {
                                    _inFlightIndex++;
                                    _inFlightOffset = 0;
                                    OnBufferWritten(segment.Count);
                                }
                            }
                            Volatile.Write(ref _writeStartedTicks, 0);
                            Volatile.Write(ref _lastActivityTicks, Environment.TickCount64);
                            ReleaseInFlight();
                        }
                        finally
                        {
                            Volatile.Write(ref _sending, 0);
                        }
                    }
                    if (!(closing || IsClosed))
                    {
                        // Data queued while we still held the flag saw a busy sender; take it now.
                        if (HasQueuedBytes() && Volatile.Read(ref _sending) == 0)
                        {
                            pass--;
                            continue;
                        }
                        break;
                    }
                    // Closing: let an inline sender holding the flag finish (its sends never block), then drain once more.
                    var spin = new SpinWait();
                    while (Volatile.Read(ref _sending) != 0)
                    {
                        spin.SpinOnce();
                    }
                }
                if (closing || IsClosed)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException or IOException or OperationCanceledException)
        {
            if (!IsClosed)
            {
                CloseConnection(ClosedReason.WriteError);
            }
        }
        catch (Exception ex)
        {
            _logger.LogError(ex, "{Client} - Unexpected error in write loop", this);
            CloseConnection(ClosedReason.WriteError);
        }
        finally
        {
            lock (_outLock)
            {
                _out.Clear();
            }
            _transport.Abort();
        }
    }

    private bool TryTakeSendingFlag() => Interlocked.CompareExchange(ref _sending, 1, 0) == 0;
}
