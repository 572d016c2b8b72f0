using System.Text;
using Nats.Storage;

namespace Nats.Server.JetStream.Consumers;

/// <summary>The delivery loop: redeliveries first, then new messages, to pull requests or the deliver subject.</summary>
internal sealed partial class JsConsumer
{
    /// <summary>One pass; returns milliseconds until the next timed event, and whether the consumer expired.</summary>
    private (long Wait, bool Expired) Pump()
    {
        var acked = _pumpAcked;
        long wait = 60_000;
        var batch = _transport.BeginDelivery(_stalls);
        try
        {
            wait = PumpLocked(ref batch, acked, out var expired);
            if (expired)
            {
                return (0, true);
            }
        }
        finally
        {
            // Flushed before the consumer lock is released, so the batch reaches the client before anything sent after it.
            batch.Dispose();
        }
        if (acked.Count > 0)
        {
            Stream.Consumers.OnAcked(this, acked);
            acked.Clear();
        }
        return (wait, false);
    }

    private long PumpLocked(ref JetStreamTransport.DeliveryBatch batch, List<ulong> acked, out bool expired)
    {
        expired = false;
        long wait = 60_000;
        lock (_lock)
        {
            if (_stopped)
            {
                return wait;
            }
            var now = Environment.TickCount64;
            wait = Math.Min(wait, CheckPending());
            if (_config.IsPush)
            {
                _pushActive = JetStreamTransport.HasInterest(Account, DeliverSubjectBytes());
                if (_pushActive)
                {
                    _lastActive = now;
                }
            }
            else
            {
                wait = Math.Min(wait, ExpireWaiting(now, sendTimeouts: true));
                if (_waiting.Count > 0)
                {
                    _lastActive = now;
                }
            }
            if (InactiveMillis > 0 && now - _lastActive > InactiveMillis)
            {
                expired = true;
                return 0;
            }
            var pending = NumPending();
            var delivered = false;
            while (!_stopped)
            {
                PullRequest? request = null;
                if (_config.IsPush)
                {
                    if (!_pushActive || (_config.FlowControl && _pendingBytes > _maxPendingBytes))
                    {
                        _pacer.Idle(_sseq);
                        break;
                    }
                }
                else
                {
                    request = NextWaiting(now);
                    if (request is null)
                    {
                        _pacer.Idle(_sseq);
                        break;
                    }
                }
                var (message, dc) = NextMessage();
                if (message is null)
                {
                    _pacer.Idle(_sseq);
                    break;
                }
                var size = message.Subject.Length + message.Header.Length + message.Data.Length;
                if (PaceMillis(message, dc, size, pending) is > 0 and var paced)
                {
                    wait = Math.Min(wait, paced);
                    break;
                }
                if (request is { MaxBytes: > 0 })
                {
                    if (size > request.MaxBytes)
                    {
                        batch.Flush();
                        SendStatus(request.ReplyBytes, $"NATS/1.0 409 Message Size Exceeds MaxBytes\r\nNats-Pending-Messages: {request.Remaining}\r\nNats-Pending-Bytes: {request.MaxBytes}\r\n\r\n");
                        _waiting.Remove(request);
                        Unget(message.Sequence, dc);
                        continue;
                    }
                    request.MaxBytes -= size;
                    if (request.MaxBytes == 0)
                    {
                        request.Remaining = 1;
                    }
                }
                if (dc == 1 && pending > 0)
                {
                    pending--;
                }
                Deliver(ref batch, message, dc, request, pending, acked);
                delivered = true;
                if (request is not null)
                {
                    request.Remaining--;
                    request.Delivered++;
                    if (request.Remaining <= 0)
                    {
                        _waiting.Remove(request);
                    }
                }
                _lastActive = now;
                if (batch.Stalled)
                {
                    break;
                }
            }
            batch.Flush();
            if (!_config.IsPush)
            {
                // no_wait requests that got something end here once nothing more is there (2.9.10 answers 408).
                for (var i = _waiting.Count - 1; i >= 0; i--)
                {
                    var w = _waiting[i];
                    if (w.NoWait && NumPending() == 0 && _redeliverQueue.Count == 0)
                    {
                        SendStatus(w.ReplyBytes, w.Delivered > 0
                            ? $"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: {w.Remaining}\r\nNats-Pending-Bytes: {w.MaxBytes}\r\n\r\n"
                            : "NATS/1.0 404 No Messages\r\n\r\n");
                        _waiting.RemoveAt(i);
                    }
                }
            }
            else if (_config.Heartbeat > 0 && _pushActive)
            {
                var interval = _config.Heartbeat / 1_000_000;
                if (now - _lastPushSend >= interval)
                {
                    var stalled = _flowControlId is null ? "" : $"Nats-Consumer-Stalled: {_flowControlId}\r\n";
                    SendStatus(Encoding.UTF8.GetBytes(_config.DeliverSubject!),
                        $"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {_dseq - 1}\r\nNats-Last-Stream: {_sseq - 1}\r\n{stalled}\r\n");
                    _lastPushSend = now;
                }
                wait = Math.Min(wait, Math.Max(1, interval - (now - _lastPushSend)));
            }
            if (InactiveMillis > 0)
            {
                wait = Math.Min(wait, Math.Max(1, InactiveMillis - (now - _lastActive) + 1));
            }
            if (delivered)
            {
                // One ack-wait timer: the earliest pending deadline, which this pass's deliveries lowered
                // (PendingDeadline), so what was just sent is redelivered on time, not at an unrelated wake-up.
                wait = Math.Min(wait, CheckPending());
            }
        }
        return wait;
    }

    private void Unget(ulong seq, ulong dc)
    {
        if (dc > 1)
        {
            _redeliverQueue.Insert(0, seq);
            if (_redelivered.TryGetValue(seq, out var count))
            {
                if (count <= 1)
                {
                    _redelivered.Remove(seq);
                }
                else
                {
                    _redelivered[seq] = count - 1;
                }
            }
        }
        else
        {
            _sseq = seq;
        }
    }

    /// <summary>Go's getNextMsg: a due redelivery, the next of a last-per-subject start, or the next new message.</summary>
    private (StoredMessage? Message, ulong Dc) NextMessage()
    {
        var store = Stream.Store;
        if (TakePaced() is { } paced)
        {
            return paced;
        }
        while (_redeliverQueue.Count > 0)
        {
            var seq = _redeliverQueue[0];
            _redeliverQueue.RemoveAt(0);
            if (!_pending.ContainsKey(seq))
            {
                continue;
            }
            var count = _redelivered.GetValueOrDefault(seq) + 1;
            _redelivered[seq] = count;
            var dc = count + 1;
            var max = _config.MaxDeliver;
            if (max > 0 && dc > (ulong)max)
            {
                if (dc == (ulong)max + 1)
                {
                    ConsumerAdvisories.MaxDeliveries(this, seq, dc - 1);
                }
                _pending.Remove(seq);
                continue;
            }
            if (store.LoadMsg(seq, _message) is { } redelivery)
            {
                return (redelivery, dc);
            }
            _pending.Remove(seq);
        }
        if (_lastPerSubject is { Count: > 0 } skip)
        {
            var seq = skip.Dequeue();
            if (skip.Count == 0)
            {
                _sseq = _lastPerSubjectResume + 1;
                _lastPerSubject = null;
            }
            else
            {
                _sseq = skip.Peek();
            }
            if (store.LoadMsg(seq, _message) is { } last)
            {
                return (last, 1);
            }
            return (null, 0);
        }
        if (_config.MaxAckPending > 0 && _config.AckPolicy != AckPolicyKind.None && _pending.Count >= _config.MaxAckPending)
        {
            return (null, 0);
        }
        var message = store.LoadNextMsg(_config.Filter, _sseq, _message, out var skipTo);
        if (skipTo >= _sseq)
        {
            _sseq = skipTo + 1;
        }
        return (message, 1);
    }

    private void Deliver(ref JetStreamTransport.DeliveryBatch batch, StoredMessage message, ulong dc, PullRequest? request, ulong pending, List<ulong> acked)
    {
        var dseq = _dseq++;
        var now = DateTime.UtcNow;
        var nowNanos = (now - DateTime.UnixEpoch).Ticks * 100;
        var ackPolicy = _config.AckPolicy;
        var subjectBytes = Encoding.UTF8.GetMaxByteCount(message.Subject.Length);
        var scratch = DeliveryScratch(subjectBytes + 128);
        var replyLength = FormatAckReply(scratch, dc, message.Sequence, dseq, message.Timestamp, pending);
        ReadOnlySpan<byte> reply = scratch.AsSpan(0, replyLength);
        var subjectLength = Encoding.UTF8.GetBytes(message.Subject, scratch.AsSpan(replyLength));
        ReadOnlySpan<byte> subject = scratch.AsSpan(replyLength, subjectLength);
        var header = message.Header.Span;
        var data = message.Data.Span;
        byte[]? headersOnly = null;
        if (_config.HeadersOnly)
        {
            var builder = new StringBuilder();
            builder.Append(header.IsEmpty ? "NATS/1.0\r\n" : Encoding.UTF8.GetString(header[..^2]));
            builder.Append("Nats-Msg-Size: ").Append(data.Length).Append("\r\n\r\n");
            headersOnly = Encoding.UTF8.GetBytes(builder.ToString());
            header = headersOnly;
            data = default;
        }
        var to = request is not null ? request.ReplyBytes : DeliverSubjectBytes();
        batch.Deliver(Account, to, subject, reply, header, data);
        _lastDelivered = nowNanos;
        _lastPushSend = Environment.TickCount64;
        if (ackPolicy == AckPolicyKind.None)
        {
            _ackFloorConsumer = dseq;
            _ackFloorStream = message.Sequence;
            if (Stream.Config.Retention != Api.RetentionPolicy.Limits)
            {
                acked.Add(message.Sequence);
            }
        }
        else
        {
            if (_pending.TryGetValue(message.Sequence, out var existing))
            {
                _pending[message.Sequence] = existing with { Timestamp = nowNanos };
            }
            else
            {
                _pending[message.Sequence] = new PendingDelivery(dseq, nowNanos);
            }
            PendingDeadline(nowNanos + AckWaitFor(message.Sequence));
        }
        try
        {
            _store?.UpdateDelivered(dseq, message.Sequence, dc, nowNanos);
        }
        catch (StoreException)
        {
            // State for a message gone meanwhile; the next update supersedes it.
        }
        if (_config.IsPush && _config.FlowControl)
        {
            _pendingBytes += message.Subject.Length + header.Length + data.Length;
            if (_flowControlId is null && _pendingBytes > _maxPendingBytes / 2)
            {
                batch.Flush();
                SendFlowControl();
            }
        }
    }

    private void SendFlowControl()
    {
        var id = $"$JS.FC.{Stream.Name}.{Name}.{Random.Shared.Next(100000, 999999)}";
        _flowControlId = id;
        _flowControlSize = _pendingBytes;
        _transport.Publish(Account, Encoding.UTF8.GetBytes(_config.DeliverSubject!), Encoding.UTF8.GetBytes(id),
            "NATS/1.0 100 FlowControl Request\r\n\r\n"u8, default);
    }

    private void OnFlowControl(Accounts.Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_lock)
        {
            if (_flowControlId is null || !subject.SequenceEqual(Encoding.UTF8.GetBytes(_flowControlId)))
            {
                return;
            }
            _maxPendingBytes = Math.Min(_maxPendingBytes * 2, FlowControlLimit);
            _pendingBytes = Math.Max(0, _pendingBytes - _flowControlSize);
            _flowControlId = null;
            _flowControlSize = 0;
        }
        Signal();
    }

    /// <summary>Go's checkPending: pending deliveries past ack_wait (or their backoff step) go to the redelivery queue, in stream order.</summary>
    private long CheckPending()
    {
        if (_pending.Count == 0 || _config.AckPolicy == AckPolicyKind.None)
        {
            return 60_000;
        }
        var nowNanos = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
        if (nowNanos < _pendingCheckAt)
        {
            // Nothing can be due before the earliest deadline seen: skip the scan (a pass per batch, not per pending).
            return Math.Max(1, (_pendingCheckAt - nowNanos) / 1_000_000 + 1);
        }
        long next = long.MaxValue;
        List<ulong>? due = null;
        foreach (var (seq, pending) in _pending)
        {
            if (_redeliverQueue.Contains(seq))
            {
                continue;
            }
            var wait = AckWaitFor(seq);
            var deadline = pending.Timestamp + wait;
            if (deadline <= nowNanos)
            {
                (due ??= []).Add(seq);
            }
            else
            {
                next = Math.Min(next, deadline - nowNanos);
            }
        }
        if (due is not null)
        {
            due.Sort();
            _redeliverQueue.AddRange(due);
        }
        _pendingCheckAt = next == long.MaxValue ? long.MaxValue : nowNanos + next;
        return next == long.MaxValue ? 60_000 : Math.Max(1, next / 1_000_000 + 1);
    }

    /// <summary>A pending delivery falls due at <paramref name="deadline"/>: the next check must not be later.</summary>
    private void PendingDeadline(long deadline)
    {
        if (deadline < _pendingCheckAt)
        {
            _pendingCheckAt = deadline;
        }
    }

    private long AckWaitFor(ulong seq)
    {
        if (_config.BackOff is { Count: > 0 } backoff)
        {
            var count = (int)_redelivered.GetValueOrDefault(seq);
            return backoff[Math.Min(count, backoff.Count - 1)];
        }
        return _config.AckWait > 0 ? _config.AckWait : ConsumerConfigCheck.DefaultAckWait;
    }

    /// <summary>The first waiting request still wanted (not expired, someone listening).</summary>
    private PullRequest? NextWaiting(long now)
    {
        while (_waiting.Count > 0)
        {
            var request = _waiting[0];
            // Interest was checked for every waiting request by ExpireWaiting at the start of this pass.
            if (request.Expires == 0 || now < request.Expires)
            {
                return request;
            }
            _waiting.RemoveAt(0);
        }
        return null;
    }

    /// <summary>Go's processWaiting: expired requests get 408, ones nobody listens to are dropped, heartbeats go out.</summary>
    private long ExpireWaiting(long now, bool sendTimeouts)
    {
        long next = 60_000;
        for (var i = 0; i < _waiting.Count; i++)
        {
            var request = _waiting[i];
            if (request.Expires != 0 && now >= request.Expires)
            {
                if (sendTimeouts)
                {
                    SendStatus(request.ReplyBytes, $"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: {request.Remaining}\r\nNats-Pending-Bytes: {request.MaxBytes}\r\n\r\n");
                }
                _waiting.RemoveAt(i--);
                continue;
            }
            if (!JetStreamTransport.HasInterest(Account, request.ReplyBytes))
            {
                _waiting.RemoveAt(i--);
                continue;
            }
            if (request.Heartbeat > 0)
            {
                if (now >= request.NextHeartbeat)
                {
                    SendStatus(request.ReplyBytes, $"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: {_dseq - 1}\r\nNats-Last-Stream: {_sseq - 1}\r\n\r\n");
                    request.NextHeartbeat = now + request.Heartbeat;
                }
                next = Math.Min(next, request.NextHeartbeat - now);
            }
            if (request.Expires != 0)
            {
                next = Math.Min(next, request.Expires - now);
            }
        }
        return Math.Max(1, next);
    }
}
