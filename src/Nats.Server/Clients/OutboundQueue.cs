using System.Net.Sockets;
using Nats.Server.Subscriptions;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

/// <summary>What <see cref="OutboundQueue.AppendMessage"/> did with a message.</summary>
internal enum AppendResult
{
    /// <summary>The connection or the subscription is closed: nothing queued.</summary>
    Closed,
    Queued,

    /// <summary>Queued, and it took the subscription to its auto-unsubscribe limit.</summary>
    QueuedReachedMax,

    /// <summary>A racing publisher already took the last delivery the limit allowed.</summary>
    PastMax,

    /// <summary>It would take the queue past max_pending: the connection must be cut.</summary>
    SlowConsumer,

    /// <summary>Dropped for this subscriber only (no_fast_producer_stall).</summary>
    Dropped,
}

/// <summary>
/// One connection's outbound side (a client's or a route's): the queue every producer appends to under its lock, the writing
/// of it (a write loop, or a publisher's non-blocking inline send), and the stall gate publishers
/// wait on when the queue is full (see <see cref="StallList"/>). Only the holder of the
/// sending flag touches the transport's send side. The connection decides policy (permissions,
/// slow-consumer cuts, logging); this type only moves bytes and measures progress.
/// </summary>
internal sealed class OutboundQueue
{
    private const long InlineFlushMaxBytes = 64 * 1024;

    // Memory (queued and in-flight chunks) past which a publisher waits for this subscriber. Small
    // next to max_pending so memory stays low with many subscribers: the kernel's socket buffers
    // (several MiB on a busy connection, not in our resident set) keep the subscriber fed meanwhile.
    // Counted in chunk memory rather than message bytes, because a write loop that takes the queue
    // often seals chunks part-filled: 4 MiB of 16 KiB messages held 11 MiB of chunks.
    internal const long StallThresholdCap = 1024 * 1024;

    private readonly IOutboundOwner _owner;
    private readonly ClientTransport _transport;
    private readonly Lock _sync = new();
    private readonly OutboundBuffer _buffer = new();
    private readonly AsyncSignal _flushSignal = new();
    private readonly List<ArraySegment<byte>> _inFlight = [];
    private int _inFlightIndex;
    private int _inFlightOffset;
    private int _sending;
    private int _closed;
    private long _writeStartedTicks;

    // Bytes taken off the queue but not yet written; they still count towards max_pending, as in Go.
    private long _inFlightBytes;

    // Memory of the in-flight chunks not yet given back (each goes back as soon as it is written).
    private long _inFlightHeld;

    // Bytes written so far: what "progress" means for a stalled subscriber.
    private long _bytesWritten;

    // Completed when the queue has drained below half the stall threshold (guarded by _sync).
    private TaskCompletionSource? _stallGate;
    private long _stallThreshold;

    // _bytesWritten when a publisher last gave up waiting on this reader (-1: never). Until the reader writes
    // again, publishers go on without pausing for it: max_pending and the write deadline decide its fate.
    private long _stallsSuspendedAt = -1;

    /// <summary>Id of the publisher batch that last queued here; dedupes <see cref="FlushBatch"/>.</summary>
    internal long FlushMark;

    /// <summary>Messages and bytes queued (updated under the lock).</summary>
    public long OutMsgs;
    public long OutBytes;

    public OutboundQueue(IOutboundOwner owner, ClientTransport transport)
    {
        _owner = owner;
        _transport = transport;
    }

    /// <summary>The lock deliveries take; UNSUB takes it too so an auto-unsubscribe limit and the delivered count agree.</summary>
    public Lock Sync => _sync;

    public bool IsClosed => Volatile.Read(ref _closed) != 0;

    public long PendingBytes
    {
        get
        {
            lock (_sync)
            {
                return _buffer.PendingBytes;
            }
        }
    }

    /// <summary>Queued plus in flight: what max_pending limits.</summary>
    public long PendingAndInFlight
    {
        get
        {
            lock (_sync)
            {
                return _buffer.PendingBytes + Volatile.Read(ref _inFlightBytes);
            }
        }
    }

    /// <summary>Chunks queued plus those taken by a write and not yet fully written: the "chunks" of Go's
    /// "WriteDeadline of 1s exceeded with 2 chunks of N total bytes." line.</summary>
    public int PendingChunks
    {
        get
        {
            lock (_sync)
            {
                return _buffer.ChunkCount + Math.Max(0, _inFlight.Count - _inFlightIndex);
            }
        }
    }

    /// <summary>When the current blocking write started (0 when none is in progress), for the write deadline.</summary>
    public long WriteStartedTicks => Volatile.Read(ref _writeStartedTicks);

    public long BytesWritten => Volatile.Read(ref _bytesWritten);

    /// <summary>Marks the queue closed; true only for the first caller.</summary>
    public bool TryClose() => Interlocked.CompareExchange(ref _closed, 1, 0) == 0;

    /// <summary>Drops everything queued (a cut connection is not flushed).</summary>
    public void Discard()
    {
        lock (_sync)
        {
            _buffer.Clear();
        }
    }

    public void SignalFlush() => _flushSignal.Set();

    /// <summary>Queues a protocol line; false when the connection is closed.</summary>
    public bool Write(ReadOnlySpan<byte> line)
    {
        lock (_sync)
        {
            if (IsClosed)
            {
                return false;
            }
            _buffer.Write(line);
            return true;
        }
    }

    /// <summary>
    /// Copies one frame (a protocol line and the message after it, ending in CRLF: a route's RMSG) into the queue.
    /// No max_pending applies: a route is never cut for being behind, only when its writes make no
    /// progress. <paramref name="stall"/> is set when the queue's memory is past
    /// <paramref name="stallThreshold"/> and the publisher may wait (<paramref name="canStall"/>): it must
    /// then await <see cref="WaitUntilDrainedAsync"/>. False when the queue is closed.
    /// </summary>
    public bool AppendFrame(ReadOnlySpan<byte> line, ReadOnlySpan<byte> message, long stallThreshold, bool canStall, out bool stall)
    {
        stall = false;
        var length = line.Length + message.Length;
        lock (_sync)
        {
            if (IsClosed)
            {
                return false;
            }
            var span = _buffer.GetSpan(length);
            line.CopyTo(span);
            message.CopyTo(span[line.Length..]);
            _buffer.Advance(length);
            OutMsgs++;
            OutBytes += message.Length - 2;
            if (canStall && _buffer.HeldBytes + Volatile.Read(ref _inFlightHeld) > stallThreshold && !StallsSuspended)
            {
                _stallThreshold = stallThreshold;
                _stallGate ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                stall = true;
            }
            return true;
        }
    }

    /// <summary>
    /// Copies one MSG/HMSG (prefix, sid, suffix, message) into the queue, within max_pending.
    /// <paramref name="stall"/> is set when the queue is past the stall threshold and the publisher
    /// may wait (<paramref name="canStall"/>): it must then await <see cref="WaitUntilDrainedAsync"/>.
    /// </summary>
    public AppendResult AppendMessage(Subscription subscription, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message, long maxPending, bool noFastProducerStall, bool canStall, out bool stall)
    {
        stall = false;
        var sid = subscription.Sid;
        var length = prefix.Length + sid.Length + suffix.Length + message.Length;
        lock (_sync)
        {
            if (IsClosed || subscription.Closed)
            {
                return AppendResult.Closed;
            }
            var delivered = ++subscription.Delivered;
            var pending = _buffer.PendingBytes + Volatile.Read(ref _inFlightBytes) + length;
            if (subscription.Max > 0 && delivered > subscription.Max)
            {
                return AppendResult.PastMax;
            }
            if (pending > maxPending)
            {
                return AppendResult.SlowConsumer;
            }
            if (noFastProducerStall && canStall && pending > maxPending / 4 * 3)
            {
                // The trade-off the operator chose (Go 2.11 drops past 3/4): this subscriber misses it, nobody waits.
                subscription.Delivered--;
                return AppendResult.Dropped;
            }
            var span = _buffer.GetSpan(length);
            prefix.CopyTo(span);
            var position = prefix.Length;
            sid.CopyTo(span[position..]);
            position += sid.Length;
            suffix.CopyTo(span[position..]);
            position += suffix.Length;
            message.CopyTo(span[position..]);
            _buffer.Advance(length);
            OutMsgs++;
            OutBytes += message.Length - 2;
            var threshold = Math.Min(maxPending / 2, StallThresholdCap);
            if (!noFastProducerStall && canStall && _buffer.HeldBytes + Volatile.Read(ref _inFlightHeld) > threshold && !StallsSuspended)
            {
                _stallThreshold = threshold;
                _stallGate ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                stall = true;
            }
            return subscription.Max > 0 && delivered == subscription.Max ? AppendResult.QueuedReachedMax : AppendResult.Queued;
        }
    }

    /// <summary>
    /// Copies one whole frame of another protocol (an MQTT packet) into the queue, under the limits
    /// <see cref="AppendMessage"/> applies: max_pending, the no_fast_producer_stall drop and the stall
    /// gate. Counts a message only when <paramref name="payloadBytes"/> is not negative.
    /// </summary>
    public AppendResult AppendPacket(ReadOnlySpan<byte> packet, int payloadBytes, long maxPending, bool noFastProducerStall, bool canStall, out bool stall)
    {
        stall = false;
        lock (_sync)
        {
            if (IsClosed)
            {
                return AppendResult.Closed;
            }
            var pending = _buffer.PendingBytes + Volatile.Read(ref _inFlightBytes) + packet.Length;
            if (pending > maxPending)
            {
                return AppendResult.SlowConsumer;
            }
            if (noFastProducerStall && canStall && pending > maxPending / 4 * 3)
            {
                return AppendResult.Dropped;
            }
            packet.CopyTo(_buffer.GetSpan(packet.Length));
            _buffer.Advance(packet.Length);
            if (payloadBytes >= 0)
            {
                OutMsgs++;
                OutBytes += payloadBytes;
            }
            var threshold = Math.Min(maxPending / 2, StallThresholdCap);
            if (!noFastProducerStall && canStall && _buffer.HeldBytes + Volatile.Read(ref _inFlightHeld) > threshold && !StallsSuspended)
            {
                _stallThreshold = threshold;
                _stallGate ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                stall = true;
            }
            return AppendResult.Queued;
        }
    }

    /// <summary>
    /// Waits until the queue has drained below half the stall threshold (true), or until
    /// <paramref name="bound"/> passes without a byte written (false: the reader is stuck).
    /// Returns true at once when no stall is pending.
    /// </summary>
    public async ValueTask<bool> WaitUntilDrainedAsync(TimeSpan bound)
    {
        while (true)
        {
            Task gate;
            long progress;
            lock (_sync)
            {
                if (_stallGate is null || IsClosed)
                {
                    return true;
                }
                gate = _stallGate.Task;
                progress = Volatile.Read(ref _bytesWritten);
            }
            await gate.WaitAsync(bound).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (!gate.IsCompleted && Volatile.Read(ref _bytesWritten) == progress && !IsClosed)
            {
                return false;
            }
        }
    }

    private bool StallsSuspended => _stallsSuspendedAt == Volatile.Read(ref _bytesWritten);

    /// <summary>
    /// Lets the publishers waiting on this reader go on, and stops pausing new ones until the reader writes
    /// again: a reader that made no progress for a short while may only be starved of CPU, so it is not cut
    /// for that; max_pending and the write deadline still bound it, as in Go.
    /// </summary>
    public void SuspendStalls()
    {
        TaskCompletionSource? gate;
        lock (_sync)
        {
            _stallsSuspendedAt = Volatile.Read(ref _bytesWritten);
            gate = _stallGate;
            _stallGate = null;
        }
        gate?.TrySetResult();
    }

    /// <summary>Opens the stall gate once the queue is drained enough (or closed).</summary>
    public void ReleaseStallIfDrained()
    {
        TaskCompletionSource? gate = null;
        lock (_sync)
        {
            if (_stallGate is not null
                && (IsClosed || _buffer.HeldBytes + Volatile.Read(ref _inFlightHeld) <= _stallThreshold / 2))
            {
                gate = _stallGate;
                _stallGate = null;
            }
        }
        gate?.TrySetResult();
    }

    /// <summary>
    /// Writes queued bytes with a non-blocking send when nobody else is sending (a publisher's read
    /// loop at the end of its batch, like Go's flushClients: it saves a thread hop per message on
    /// request/reply paths). Returns false when the write loop must take over (busy, a large
    /// backlog, a transport that cannot send without blocking, or the socket is full).
    /// </summary>
    public bool TryFlushInline()
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
        try
        {
            lock (_sync)
            {
                if (_buffer.PendingBytes > InlineFlushMaxBytes || _inFlight.Count > 0)
                {
                    return false;
                }
                Volatile.Write(ref _inFlightBytes, _buffer.TakeAll(_inFlight, out var held));
                Interlocked.Add(ref _inFlightHeld, held);
            }
            while (_inFlightIndex < _inFlight.Count)
            {
                var segment = _inFlight[_inFlightIndex];
                var remaining = segment.AsSpan(_inFlightOffset);
                var sent = _transport.TrySendNow(remaining);
                if (sent < 0)
                {
                    _owner.OnWriteError();
                    return true;
                }
                if (sent < remaining.Length)
                {
                    _inFlightOffset += sent;
                    return false;
                }
                OnBufferWritten(segment);
            }
            ReleaseInFlight();
            _buffer.ResetChunkSizeIfIdle(_sync);
            _owner.NoteWriteActivity();
            if (_transport.HasPendingOutput)
            {
                // The transport took the bytes but holds some on its side: the write loop finishes them.
                return false;
            }
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
        return !HasQueuedBytes();
    }

    /// <summary>Drains the queue whenever signalled, until the connection closes; then aborts the transport.</summary>
    public async Task RunWriteLoopAsync()
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
                    while (Interlocked.CompareExchange(ref _sending, 1, 0) == 0)
                    {
                        try
                        {
                            lock (_sync)
                            {
                                Interlocked.Add(ref _inFlightBytes, _buffer.TakeAll(_inFlight, out var held));
                                Interlocked.Add(ref _inFlightHeld, held);
                            }
                            if (_inFlightIndex >= _inFlight.Count)
                            {
                                if (_transport.HasPendingOutput)
                                {
                                    Volatile.Write(ref _writeStartedTicks, Environment.TickCount64);
                                    await _transport.SendAsync(ReadOnlyMemory<byte>.Empty, CancellationToken.None).ConfigureAwait(false);
                                    Volatile.Write(ref _writeStartedTicks, 0);
                                    _owner.NoteWriteActivity();
                                }
                                ReleaseInFlight();
                                _buffer.ResetChunkSizeIfIdle(_sync);
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
                                    OnBufferWritten(segment);
                                }
                            }
                            Volatile.Write(ref _writeStartedTicks, 0);
                            _owner.NoteWriteActivity();
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
                _owner.OnWriteError();
            }
        }
        catch (Exception ex)
        {
            _owner.OnWriteLoopFailed(ex);
        }
        finally
        {
            Discard();
            _transport.Abort();
        }
    }

    private bool HasQueuedBytes()
    {
        lock (_sync)
        {
            return !_buffer.IsEmpty;
        }
    }

    /// <summary>
    /// After the current in-flight chunk is fully written: gives it back to the pool at once (a long
    /// backlog then holds only what is still unwritten), counts progress, and opens the stall gate
    /// once drained.
    /// </summary>
    private void OnBufferWritten(ArraySegment<byte> segment)
    {
        _inFlight[_inFlightIndex] = default;
        _inFlightIndex++;
        _inFlightOffset = 0;
        OutboundChunkPool.Shared.Return(segment.Array!);
        Interlocked.Add(ref _inFlightHeld, -segment.Array!.Length);
        var bytes = segment.Count;
        Volatile.Write(ref _bytesWritten, _bytesWritten + bytes);
        Volatile.Write(ref _inFlightBytes, _inFlightBytes - bytes);
        if (Volatile.Read(ref _stallGate) is not null)
        {
            ReleaseStallIfDrained();
        }
    }

    private void ReleaseInFlight()
    {
        Volatile.Write(ref _inFlightBytes, 0);
        Volatile.Write(ref _inFlightHeld, 0);
        OutboundBuffer.Release(_inFlight);
        _inFlightIndex = 0;
        _inFlightOffset = 0;
    }
}
