using System.Text;
using System.Text.Json;
using Nats.Server.Configuration;
using Nats.Storage;

namespace Nats.Server.JetStream.Consumers;

/// <summary>The ack protocol (Go's processAck) and pull requests (processNextMsgRequest).</summary>
internal sealed partial class JsConsumer
{
    private void OnAck(Accounts.Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        var (sseq, dseq, dc) = AckSubject.Parse(subject);
        SampleAck(sseq, dseq, dc, payload);
        var skipReply = sseq == 0;
        var body = payload;
        // Only interest and work-queue streams act on what was acknowledged: limits streams allocate no list.
        var acked = Stream.Config.Retention == Api.RetentionPolicy.Limits ? null : new List<ulong>();
        var durable = DurabilityTicket.Completed;
        // An ack wakes the delivery loop only when it can let more out (Go's processAckMsg needSignal).
        var signal = true;
        if (body.IsEmpty || body.SequenceEqual("+ACK"u8) || body.SequenceEqual("+OK"u8))
        {
            durable = AckMessage(sseq, dseq, acked, out signal);
        }
        else if (body.StartsWith("+NXT"u8))
        {
            AckMessage(sseq, dseq, acked, out _);
            if (!reply.IsEmpty)
            {
                NextRequest(Encoding.UTF8.GetString(reply), body[4..]);
            }
            skipReply = true;
        }
        else if (body.StartsWith("-NAK"u8))
        {
            Nak(sseq, dseq, dc, body[4..]);
        }
        else if (body.SequenceEqual("+WPI"u8))
        {
            Progress(sseq);
            signal = false;
        }
        else if (body.StartsWith("+TERM"u8))
        {
            durable = AckMessage(sseq, dseq, acked, out signal);
            ConsumerAdvisories.Terminated(this, sseq, dseq, dc);
        }
        if (!reply.IsEmpty && !skipReply)
        {
            // A double ack is confirmed once the acknowledgement is on stable storage (durable consumers).
            if (durable.IsDurable)
            {
                _transport.Publish(account, reply, default, default, default);
            }
            else
            {
                _ = ConfirmWhenDurableAsync(durable, account, reply.ToArray());
            }
        }
        if (acked is { Count: > 0 })
        {
            Stream.Consumers.OnAcked(this, acked);
        }
        if (signal)
        {
            Signal();
        }
    }

    private async Task ConfirmWhenDurableAsync(DurabilityTicket durable, Accounts.Account account, byte[] reply)
    {
        try
        {
            await durable;
        }
        catch (Exception e) when (e is IOException or StoreException or ObjectDisposedException)
        {
            // Not durable: no confirmation, the client's double ack times out as it would on a failed server.
            return;
        }
        _transport.Publish(account, reply, default, default, default);
    }

    /// <summary>Go's processAckMsg for the explicit and all policies; the acknowledged stream sequences go to <paramref name="acked"/>.</summary>
    private DurabilityTicket AckMessage(ulong sseq, ulong dseq, List<ulong>? acked, out bool unblocked)
    {
        lock (_lock)
        {
            // At max_ack_pending the loop waits for acks; below it, an ack changes nothing it delivers.
            unblocked = _config.MaxAckPending > 0 && _pending.Count >= _config.MaxAckPending;
            if (sseq == 0 || _config.AckPolicy == AckPolicyKind.None)
            {
                return DurabilityTicket.Completed;
            }
            if (sseq >= _sseq && _lastPerSubject is null)
            {
                return DurabilityTicket.Completed;
            }
            if (_config.AckPolicy == AckPolicyKind.All)
            {
                if (dseq <= _ackFloorConsumer || sseq <= _ackFloorStream)
                {
                    return DurabilityTicket.Completed;
                }
                foreach (var seq in _pending.Keys.Where(s => s <= sseq).ToList())
                {
                    _pending.Remove(seq);
                    _redelivered.Remove(seq);
                    _redeliverQueue.Remove(seq);
                    acked?.Add(seq);
                }
                _ackFloorConsumer = dseq;
                _ackFloorStream = sseq;
            }
            else
            {
                if (!_pending.Remove(sseq, out var pending))
                {
                    return DurabilityTicket.Completed;
                }
                dseq = pending.Sequence;
                acked?.Add(sseq);
                if (_pending.Count == 0)
                {
                    _ackFloorConsumer = _dseq - 1;
                    _ackFloorStream = _sseq - 1;
                }
                else if (dseq == _ackFloorConsumer + 1)
                {
                    MoveAckFloorPast(dseq, sseq);
                }
                if (_redelivered.Count > 0)
                {
                    _redelivered.Remove(sseq);
                }
                if (_redeliverQueue.Count > 0)
                {
                    _redeliverQueue.Remove(sseq);
                }
            }
            _lastAcked = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
            try
            {
                return _store?.UpdateAcks(dseq, sseq) ?? DurabilityTicket.Completed;
            }
            catch (StoreException)
            {
                // Already acknowledged in the store (a double ack): nothing to record.
                return DurabilityTicket.Completed;
            }
        }
    }

    /// <summary>Go's processAckMsg floor move: the oldest delivery was acknowledged, so the floor goes to
    /// just below the next delivery still pending. In-order acks find it at the next stream sequence.</summary>
    private void MoveAckFloorPast(ulong dseq, ulong sseq)
    {
        _ackFloorConsumer = dseq;
        _ackFloorStream = sseq;
        if (_sseq - 1 - sseq > (ulong)_pending.Count * 4)
        {
            // Sparse (a filtered consumer): walking the pending set beats walking the stream sequences.
            var found = false;
            var min = ulong.MaxValue;
            foreach (var seq in _pending.Keys)
            {
                if (seq > sseq && seq < min)
                {
                    min = seq;
                    found = true;
                }
            }
            if (found && _pending[min].Sequence > 0)
            {
                _ackFloorConsumer = _pending[min].Sequence - 1;
                _ackFloorStream = min - 1;
            }
            return;
        }
        for (var seq = sseq + 1; seq < _sseq; seq++)
        {
            if (_pending.TryGetValue(seq, out var next))
            {
                if (next.Sequence > 0)
                {
                    _ackFloorConsumer = next.Sequence - 1;
                    _ackFloorStream = seq - 1;
                }
                return;
            }
        }
    }

    private void Nak(ulong sseq, ulong dseq, ulong dc, ReadOnlySpan<byte> argument)
    {
        lock (_lock)
        {
            if (dseq <= _ackFloorConsumer || dseq > _dseq || !_pending.TryGetValue(sseq, out var pending))
            {
                return;
            }
            ConsumerAdvisories.Nak(this, sseq, dseq, dc);
            var text = Encoding.UTF8.GetString(argument.Trim(" \t\r\n"u8));
            if (text.Length > 0 && ParseDelay(text) is { } delay)
            {
                _redeliverQueue.Remove(sseq);
                var nowNanos = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
                // Due after the delay: the ack-wait check sees it as delivered (delay - ack_wait) ago.
                _pending[sseq] = pending with { Timestamp = nowNanos - AckWaitFor(sseq) + delay };
                PendingDeadline(nowNanos + delay);
                return;
            }
            if (!_redeliverQueue.Contains(sseq))
            {
                _redeliverQueue.Add(sseq);
            }
        }
    }

    private static long? ParseDelay(string text)
    {
        if (text[0] == '{')
        {
            try
            {
                return JsonSerializer.Deserialize(text, ConsumerJson.Context.NakOptions)?.Delay;
            }
            catch (JsonException)
            {
                return null;
            }
        }
        return GoDuration.TryParseNanos(text, out var nanos, out _) ? nanos : null;
    }

    private void Progress(ulong sseq)
    {
        lock (_lock)
        {
            if (_pending.TryGetValue(sseq, out var pending))
            {
                var nowNanos = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
                _pending[sseq] = pending with { Timestamp = nowNanos };
                _redeliverQueue.Remove(sseq);
            }
        }
    }

    /// <summary>A CONSUMER.MSG.NEXT request (or +NXT) answered on <paramref name="reply"/>.</summary>
    public void NextRequest(string reply, ReadOnlySpan<byte> body)
    {
        var replyBytes = Encoding.UTF8.GetBytes(reply);
        lock (_lock)
        {
            if (_stopped)
            {
                return;
            }
            if (_config.IsPush)
            {
                SendStatus(replyBytes, "NATS/1.0 409 Consumer is push based\r\n\r\n");
                return;
            }
            var now = Environment.TickCount64;
            if (!PullRequest.TryParse(body, now, out var batch, out var maxBytes, out var noWait, out var expires, out var heartbeat, out var error))
            {
                SendStatus(replyBytes, $"NATS/1.0 400 Bad Request - {error}\r\n\r\n");
                return;
            }
            if (_config.MaxRequestBatch > 0 && batch > _config.MaxRequestBatch)
            {
                SendStatus(replyBytes, $"NATS/1.0 409 Exceeded MaxRequestBatch of {_config.MaxRequestBatch}\r\n\r\n");
                return;
            }
            if (expires != 0 && _config.MaxRequestExpires > 0 && expires > now + _config.MaxRequestExpires / 1_000_000)
            {
                SendStatus(replyBytes, $"NATS/1.0 409 Exceeded MaxRequestExpires of {GoDuration.FormatNanos(_config.MaxRequestExpires)}\r\n\r\n");
                return;
            }
            if (maxBytes > 0 && _config.MaxRequestMaxBytes > 0 && maxBytes > _config.MaxRequestMaxBytes)
            {
                SendStatus(replyBytes, $"NATS/1.0 409 Exceeded MaxRequestMaxBytes of {_config.MaxRequestMaxBytes}\r\n\r\n");
                return;
            }
            if (_waiting.Count >= _config.MaxWaiting)
            {
                ExpireWaiting(now, sendTimeouts: true);
            }
            if (noWait)
            {
                var available = NumPending() + (ulong)_redeliverQueue.Count;
                if (available == 0 && expires == 0)
                {
                    SendStatus(replyBytes, "NATS/1.0 404 No Messages\r\n\r\n");
                    return;
                }
            }
            if (_waiting.Count >= _config.MaxWaiting)
            {
                SendStatus(replyBytes, "NATS/1.0 409 Exceeded MaxWaiting\r\n\r\n");
                return;
            }
            _waiting.Add(new PullRequest
            {
                Reply = reply,
                ReplyBytes = replyBytes,
                Remaining = batch,
                MaxBytes = maxBytes,
                NoWait = noWait,
                Expires = expires,
                Heartbeat = heartbeat,
                NextHeartbeat = heartbeat > 0 ? now + heartbeat : 0,
            });
            _lastActive = now;
        }
        Signal();
    }
}
