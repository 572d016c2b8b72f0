using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;
using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>
/// Go's processJetStreamMsg for a standalone server: header checks in Go's order, the store, the
/// duplicate window, rollups, then the PubAck once the durability policy says the message is safe.
/// </summary>
internal sealed class StreamIngest
{
    private readonly JsStream stream;
    private readonly PendingAcks _pendingAcks;

    public StreamIngest(JsStream stream)
    {
        this.stream = stream;
        _pendingAcks = new PendingAcks(SendAcks);
        // An update cannot change republish (Go's configUpdateCheck), so it is fixed for the stream's life.
        _republish = StreamRepublish.For(stream.Config);
    }

    private readonly StreamRepublish? _republish;

    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = Api.GoJsonEncoder.Instance };

    private readonly DedupWindow _dedup = new();
    private string _lastMsgId = "";
    private bool _dedupLoaded;
    private ulong _lastSeq;
    private bool _lastSeqKnown;

    // The leadership (of the stream's group) that _lastSeq counts for: a proposal made for an earlier one is dropped.
    private int _leaderEpoch;

    // The store keys messages by string subject; a stream sees few distinct subjects, so their strings are
    // kept instead of decoded for every message (bounded: cleared when full).
    private const int MaxCachedSubjects = 4096;
    private readonly Dictionary<byte[], string> _subjects = new(Subscriptions.ByteKeyComparer.Instance);

    public void OnMessage(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload,
        Clients.FlushBatch batch)
    {
        string subjectText;
        lock (stream.Gate)
        {
            subjectText = SubjectText(subject);
        }
        Process(subjectText, reply, headers, payload, batch);
    }

    /// <summary>Under the gate: the subject's cached string.</summary>
    private string SubjectText(ReadOnlySpan<byte> subject)
    {
        var lookup = _subjects.GetAlternateLookup<ReadOnlySpan<byte>>();
        if (!lookup.TryGetValue(subject, out var text))
        {
            if (_subjects.Count >= MaxCachedSubjects)
            {
                _subjects.Clear();
            }
            text = Encoding.UTF8.GetString(subject);
            lookup[subject] = text;
        }
        return text;
    }

    /// <summary>Stores one message (also used by sourcing); returns the sequence, or 0 when refused.</summary>
    /// <param name="batch">The publisher's batch, whose end the answer may wait for; null to answer at once.</param>
    public ulong Process(string subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload,
        Clients.FlushBatch? batch = null)
    {
        var config = stream.Config;
        var canRespond = !config.NoAck && !reply.IsEmpty;
        var store = stream.Store;
        ulong seq;
        string msgId;
        DurabilityTicket durable = default;
        bool rollupSub = false, rollupAll = false;
        var republish = _republish is { } rp && rp.Matches(subject);
        ulong lastSubjectSeq = 0;
        var group = stream.Group;
        if (group is null ? config.Replicas > 1 : !group.IsActiveLeader)
        {
            // A replicated stream takes publishes on its group's leader only; while there is none (an
            // election) the publisher gets no answer, as from a Go cluster.
            return 0;
        }
        lock (stream.Gate)
        {
            EnsureDedupLoaded(config);
            if (!_lastSeqKnown)
            {
                _lastSeq = store.State().LastSeq;
                _lastSeqKnown = true;
            }
            msgId = "";
            if (config.Sealed)
            {
                return Refuse(reply, canRespond, JsErrors.StreamSealed, batch);
            }
            if (!headers.IsEmpty)
            {
                if (NatsHeaders.Get(headers, NatsHeaders.ExpectedStream) is { Length: > 0 } expected && expected != config.Name)
                {
                    return Refuse(reply, canRespond, JsErrors.StreamNotMatch, batch);
                }
                msgId = NatsHeaders.Get(headers, NatsHeaders.MsgId) ?? "";
                if (msgId.Length > 0 && _dedup.TryGet(msgId, config.DuplicateWindow, NowNanos(), out var duplicateOf, out var originalDurable))
                {
                    // A replicated original still waiting for its quorum may yet be lost with this leader: saying
                    // "duplicate" now would acknowledge it early. The publisher retries after its timeout instead.
                    if (canRespond && (group is null || duplicateOf <= store.State().LastSeq))
                    {
                        // The answer says the original is stored: like the original's own ack, it waits for the
                        // sync round that covers the original (same batch when both wait for the same round).
                        if (originalDurable.IsDurable)
                        {
                            SendAck(reply, duplicateOf, duplicate: true, batch);
                        }
                        else
                        {
                            _pendingAcks.Add(originalDurable.AsTask(), reply, duplicateOf, duplicate: true);
                        }
                    }
                    return 0;
                }
                if (NatsHeaders.TryGetSequence(headers, NatsHeaders.ExpectedLastSubjSeq, out var expectedSubjectSeq))
                {
                    var last = store.LoadLastMsg(subject);
                    var found = last?.Sequence ?? 0;
                    if (found != expectedSubjectSeq)
                    {
                        return Refuse(reply, canRespond, JsErrors.StreamWrongLastSequence.With("seq", found), batch);
                    }
                }
                if (NatsHeaders.TryGetSequence(headers, NatsHeaders.ExpectedLastSeq, out var expectedSeq) && expectedSeq != _lastSeq)
                {
                    return Refuse(reply, canRespond, JsErrors.StreamWrongLastSequence.With("seq", _lastSeq), batch);
                }
                if (NatsHeaders.Get(headers, NatsHeaders.ExpectedLastMsgId) is { Length: > 0 } expectedId && expectedId != _lastMsgId)
                {
                    return Refuse(reply, canRespond, JsErrors.StreamWrongLastMsgID.With("id", _lastMsgId), batch);
                }
                if (NatsHeaders.Get(headers, NatsHeaders.Rollup) is { Length: > 0 } rollup)
                {
                    if (!config.AllowRollup || config.DenyPurge)
                    {
                        return Refuse(reply, canRespond, JsErrors.StreamRollupFailedF.WithErr("rollup not permitted"), batch);
                    }
                    switch (rollup)
                    {
                        case "sub":
                            rollupSub = true;
                            break;
                        case "all":
                            rollupAll = true;
                            break;
                        default:
                            // Go drops the message without an answer.
                            return 0;
                    }
                }
            }
            if (config.MaxMsgSize >= 0 && headers.Length + payload.Length > config.MaxMsgSize)
            {
                return Refuse(reply, canRespond, JsErrors.StreamMessageExceedsMaximum, batch);
            }
            if (headers.Length > ushort.MaxValue)
            {
                return Refuse(reply, canRespond, JsErrors.StreamHeaderExceedsMaximum, batch);
            }
            if (stream.Account.Service.Resources.ServerExceeded(config.Storage))
            {
                return Refuse(reply, canRespond, JsErrors.InsufficientResources, batch);
            }
            if (group is not null)
            {
                return Propose(group, subject, canRespond ? reply : default, headers, payload, msgId);
            }
            // Interest retention keeps nothing while no consumer is interested (Go skips the sequence).
            if (config.Retention == RetentionPolicy.Interest && stream.Account.ConsumerCount(stream) == 0)
            {
                seq = store.SkipMsg();
                _lastSeq = seq;
                _lastMsgId = msgId;
                if (msgId.Length > 0)
                {
                    _dedup.Add(msgId, seq, NowNanos());
                }
                if (canRespond)
                {
                    SendAck(reply, seq, duplicate: false, batch);
                }
                return seq;
            }
            long timestamp;
            if (republish)
            {
                lastSubjectSeq = store.LoadLastMsg(subject)?.Sequence ?? 0;
            }
            try
            {
                var stored = store.StoreMsg(subject, headers, payload);
                (seq, timestamp) = stored;
                durable = stored.Durable;
            }
            catch (Exception e) when (e is StoreException or IOException)
            {
                // An I/O error fails the store (it refuses from then on); the publisher gets an error
                // PubAck, never a closed connection.
                _lastSeq = store.State().LastSeq;
                if (e is not StoreException { Error: StoreError.MaxMsgs or StoreError.MaxBytes or StoreError.MaxMsgsPerSubject or StoreError.MsgTooLarge or StoreError.Closed or StoreError.WriteFailed })
                {
                    stream.Account.Service.Logger.LogError("JetStream failed to store a msg on stream {Stream}: {Error}", stream.LogName, e.Message);
                }
                return Refuse(reply, canRespond, JsErrors.StreamStoreFailedF.WithErr(e.Message), batch);
            }
            _lastSeq = seq;
            if (ResourceLimits.AccountExceeded(stream.Account, config.Storage))
            {
                // Go stores, finds the account over its limit, answers 10002 and removes the message again
                // (its sequence stays used).
                store.RemoveMsg(seq);
                return Refuse(reply, canRespond, JsErrors.AccountResourcesExceeded, batch);
            }
            _lastMsgId = msgId;
            if (msgId.Length > 0)
            {
                _dedup.Add(msgId, seq, timestamp, durable);
            }
        }
        if (rollupSub)
        {
            stream.Purge(subject, 0, 1);
        }
        else if (rollupAll)
        {
            stream.Purge("", 0, 1);
        }
        if (republish)
        {
            _republish!.Send(stream, subject, headers, payload, seq, lastSubjectSeq);
        }
        stream.Account.OnStored(stream, subject, seq);
        if (canRespond)
        {
            // Acknowledged means durable: with group commit the ack waits for the fsync round that
            // covers this message (shared with every concurrent publish), without blocking this thread.
            if (durable.IsDurable)
            {
                SendAck(reply, seq, duplicate: false, batch);
            }
            else
            {
                _pendingAcks.Add(durable.AsTask(), reply, seq, duplicate: false);
            }
        }
        return seq;
    }

    /// <summary>Forgets the remembered last sequence (after purges and deletes change the store under us).</summary>
    public void Reset()
    {
        lock (stream.Gate)
        {
            // A replicated stream's leader counts the sequences it proposed, ahead of its store.
            _lastSeqKnown = stream.Group is not null && _lastSeqKnown;
        }
    }

    /// <summary>
    /// The replicated publish on the group's leader (under the gate, so entries enter the log in sequence order):
    /// the sequence is decided here, the message goes into the log as a streamMsgOp entry, and the store and the
    /// PubAck wait for the entry to be committed (fsynced on a quorum) and applied (<see cref="ApplyReplicated"/>).
    /// </summary>
    private ulong Propose(Cluster.StreamGroup group, string subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload, string msgId)
    {
        var lastSeq = _lastSeq;
        var timestamp = NowNanos();
        var seq = lastSeq + 1;
        group.Propose(Cluster.StreamMsgEntry.Encode(lastSeq, timestamp, subject, reply, headers, payload), _leaderEpoch);
        _lastSeq = seq;
        _lastMsgId = msgId;
        if (msgId.Length > 0)
        {
            _dedup.Add(msgId, seq, timestamp);
        }
        return seq;
    }

    /// <summary>
    /// Proposes an admin entry (purge, message delete) after every message numbered so far: under the gate, so it takes
    /// its place in the group's queue behind them; <paramref name="entry"/> gets the last numbered sequence.
    /// </summary>
    public void ProposeAfterNumbered(Cluster.StreamGroup group, Func<ulong, byte[]> entry)
    {
        lock (stream.Gate)
        {
            group.Propose(entry(_lastSeq), _leaderEpoch);
        }
    }

    /// <summary>
    /// This member became its group's leader with every earlier entry applied: sequences continue from its store,
    /// and the duplicate window is rebuilt from it (followers keep none).
    /// </summary>
    public void BecomeReplicatedLeader(int epoch)
    {
        lock (stream.Gate)
        {
            _leaderEpoch = epoch;
            _lastSeq = stream.Store.State().LastSeq;
            _lastSeqKnown = true;
            _dedup.Clear();
            _dedupLoaded = false;
            _lastMsgId = "";
        }
    }

    /// <summary>
    /// The stream left its group (scaled down to one replica, this one kept): sequences continue from the store, and the
    /// duplicate window is rebuilt from it, since proposals of the group that never committed are not there.
    /// </summary>
    public void LeaveReplicated()
    {
        lock (stream.Gate)
        {
            _leaderEpoch++;
            _lastSeq = stream.Store.State().LastSeq;
            _lastSeqKnown = true;
            _dedup.Clear();
            _dedupLoaded = false;
            _lastMsgId = "";
        }
    }

    /// <summary>
    /// A committed stream entry, on every replica in log order: stored at the sequence the leader gave it. An entry
    /// at or below the store's last sequence was applied before (the log is replayed after a restart) and is
    /// skipped; a gap (an entry the store refused) is skipped over so that every replica numbers alike.
    /// Returns the sequence, 0 when skipped, or the error to answer.
    /// </summary>
    /// <param name="catchUp">Fills the store from the group's leader up to a sequence (a replica behind the log's start); false when it could not.</param>
    public (ulong Seq, JsApiError? Error) ApplyReplicated(in Cluster.StreamMsgEntry entry, Func<ulong, bool>? catchUp = null)
    {
        var store = stream.Store;
        string subject;
        ulong seq;
        lock (stream.Gate)
        {
            subject = SubjectText(entry.Subject);
            var last = store.LastSequence;
            if (entry.LastSeq < last)
            {
                // Applied before (the log is replayed after a restart) when the same message, stamped by the leader,
                // is there. Otherwise this replica's store went ahead of the log (sequences it numbered on its own,
                // or messages no quorum acknowledged): its tail is cut back to the leader's and the entry stored.
                var held = store.LoadMsg(entry.LastSeq + 1);
                if (held is not null ? held.Timestamp == entry.Timestamp : store.LoadNextMsg("", entry.LastSeq + 1) is not null)
                {
                    return (0, null);
                }
                stream.Account.Service.Logger.LogWarning("JetStream stream {Stream} store ahead of its log at {Last}: truncated to {LastSeq}",
                    stream.LogName, last, entry.LastSeq);
                store.Truncate(entry.LastSeq);
                last = entry.LastSeq;
            }
            if (entry.LastSeq > last && catchUp is not null && catchUp(entry.LastSeq))
            {
                last = store.State().LastSeq;
            }
            if (entry.LastSeq > last)
            {
                stream.Account.Service.Logger.LogWarning("JetStream stream {Stream} replicated entry after {LastSeq} skips from {Last}", stream.LogName, entry.LastSeq, last);
                store.SkipMsgs(last + 1, entry.LastSeq - last);
            }
            seq = entry.LastSeq + 1;
            try
            {
                store.StoreRawMsg(subject, entry.Header, entry.Body, seq, entry.Timestamp);
            }
            catch (Exception e) when (e is StoreException or IOException)
            {
                stream.Account.Service.Logger.LogWarning("JetStream stream {Stream} replicated entry {Seq} not stored: {Error}", stream.LogName, seq, e.Message);
                if (store.State().LastSeq < seq)
                {
                    store.SkipMsg();
                }
                return (0, JsErrors.StreamStoreFailedF.WithErr(e.Message));
            }
        }
        if (!entry.Header.IsEmpty && NatsHeaders.Get(entry.Header, NatsHeaders.Rollup) is { Length: > 0 } rollup)
        {
            if (rollup == "sub")
            {
                stream.Purge(subject, 0, 1);
            }
            else if (rollup == "all")
            {
                stream.Purge("", 0, 1);
            }
        }
        stream.Account.OnStored(stream, subject, seq);
        return (seq, null);
    }

    /// <summary>The PubAcks of applied replicated entries (on the leader), one publish batch.</summary>
    public void SendReplicatedAcks(List<(byte[] Reply, ulong Seq, JsApiError? Error)> acks)
    {
        foreach (var (reply, _, error) in acks)
        {
            if (error is not null)
            {
                Refuse(reply, true, error, null);
            }
        }
        var prefix = AckPrefix();
        var buffer = prefix.Length + MaxAckTail <= 256 ? stackalloc byte[256] : new byte[prefix.Length + MaxAckTail];
        var account = stream.Account.Account;
        using var publish = stream.Account.Service.Transport.BeginBatch();
        foreach (var (reply, seq, error) in acks)
        {
            if (error is not null)
            {
                continue;
            }
            publish.Publish(account, reply, buffer[..FormatAck(buffer, prefix, seq, duplicate: false)]);
        }
    }

    public void ClearDedup()
    {
        lock (stream.Gate)
        {
            _dedup.Clear();
        }
    }

    /// <summary>A completed sync round's PubAcks, all under one publish lock and one flush per client.</summary>
    private void SendAcks(PendingAcks.Batch batch)
    {
        if (!batch.Durable.IsCompletedSuccessfully)
        {
            var message = batch.Durable.Exception?.GetBaseException().Message ?? "store sync failed";
            for (var i = 0; i < batch.Count; i++)
            {
                Refuse(batch.Reply(i), true, JsErrors.StreamStoreFailedF.WithErr(message), null);
            }
            return;
        }
        var prefix = AckPrefix();
        var buffer = prefix.Length + MaxAckTail <= 256 ? stackalloc byte[256] : new byte[prefix.Length + MaxAckTail];
        var account = stream.Account.Account;
        using var publish = stream.Account.Service.Transport.BeginBatch();
        for (var i = 0; i < batch.Count; i++)
        {
            publish.Publish(account, batch.Reply(i), buffer[..FormatAck(buffer, prefix, batch.Seq(i), batch.Duplicate(i))]);
        }
    }

    // Rebuilds the duplicate window from stored messages after a restart (Go's rebuildDedupe).
    private void EnsureDedupLoaded(StreamConfig config)
    {
        if (_dedupLoaded)
        {
            return;
        }
        _dedupLoaded = true;
        if (config.DuplicateWindow <= 0)
        {
            return;
        }
        var store = stream.Store;
        var since = DateTime.UtcNow - TimeSpan.FromTicks(config.DuplicateWindow / 100);
        var seq = store.GetSeqFromTime(since);
        var reuse = new StoredMessage();
        for (var message = store.LoadNextMsg("", seq, reuse); message is not null; message = store.LoadNextMsg("", message.Sequence + 1, reuse))
        {
            if (NatsHeaders.Get(message.Header.Span, NatsHeaders.MsgId) is { Length: > 0 } id)
            {
                _dedup.Add(id, message.Sequence, message.Timestamp);
                _lastMsgId = id;
            }
        }
    }

    private static long NowNanos() => (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;

    private ulong Refuse(ReadOnlySpan<byte> reply, bool canRespond, JsApiError error, Clients.FlushBatch? publisherBatch)
    {
        if (canRespond)
        {
            // json.Marshal of JSPubAckResponse{Error, PubAck{Stream}}: error first, then stream and seq 0.
            var buffer = new ArrayBufferWriter<byte>(256);
            using (var json = new Utf8JsonWriter(buffer, WriterOptions))
            {
                json.WriteStartObject();
                json.WritePropertyName("error");
                JsonSerializer.Serialize(json, error, JsJsonContext.Default.JsApiError);
                json.WriteString("stream", stream.Name);
                json.WriteNumber("seq", 0);
                json.WriteEndObject();
            }
            Send(reply, buffer.WrittenSpan, publisherBatch);
        }
        return 0;
    }

    /// <summary>An answer to a publish: with the publisher's read batch (in order with the batch's other acks), else at once.
    /// Either way the store's buffered appends reach the operating system first, so a killed process never
    /// loses what it acknowledged.</summary>
    private void Send(ReadOnlySpan<byte> reply, ReadOnlySpan<byte> payload, Clients.FlushBatch? batch)
    {
        var transport = stream.Account.Service.Transport;
        if (AckOutbox.For(batch) is { } outbox)
        {
            outbox.FlushBefore(stream.Store);
            outbox.Add(transport, stream.Account.Account, reply, payload);
            return;
        }
        stream.Store.FlushAllPending();
        transport.Publish(stream.Account.Account, reply, default, default, payload);
    }

    /// <summary>Go's hand-built PubAck: <c>{"stream":"S", "seq":N}</c> (with its spaces), domain and duplicate when set.</summary>
    private void SendAck(ReadOnlySpan<byte> reply, ulong seq, bool duplicate, Clients.FlushBatch? batch)
    {
        var prefix = AckPrefix();
        var max = prefix.Length + MaxAckTail;
        if (AckOutbox.For(batch) is { } outbox)
        {
            // Formatted straight into the outbox.
            outbox.FlushBefore(stream.Store);
            var length = FormatAck(outbox.Begin(reply, max), prefix, seq, duplicate);
            outbox.Commit(stream.Account.Service.Transport, stream.Account.Account, reply.Length, length);
            return;
        }
        var buffer = max <= 256 ? stackalloc byte[256] : new byte[max];
        Send(reply, buffer[..FormatAck(buffer, prefix, seq, duplicate)], batch);
    }

    // Digits of a ulong and the duplicate suffix.
    private const int MaxAckTail = 20 + 20;

    private sealed record AckPrefixCache(string Domain, byte[] Bytes);

    private AckPrefixCache? _ackPrefix;

    /// <summary>The constant part of this stream's PubAck, <c>{"stream":"S", "seq":</c> (with Go's spaces, and the
    /// domain when set), built once: an ack is then a copy and the sequence digits.</summary>
    private byte[] AckPrefix()
    {
        var domain = stream.Account.Service.Options.Domain;
        var cached = _ackPrefix;
        if (cached is not null && ReferenceEquals(cached.Domain, domain))
        {
            return cached.Bytes;
        }
        var text = domain.Length > 0
            ? $"{{\"stream\":\"{stream.Name}\", \"domain\":\"{domain}\", \"seq\":"
            : $"{{\"stream\":\"{stream.Name}\", \"seq\":";
        cached = new AckPrefixCache(domain, Encoding.UTF8.GetBytes(text));
        _ackPrefix = cached;
        return cached.Bytes;
    }

    /// <summary>Go's hand-built PubAck: the prefix, the sequence, <c>,"duplicate": true</c> when set.</summary>
    private static int FormatAck(Span<byte> buffer, byte[] prefix, ulong seq, bool duplicate)
    {
        prefix.CopyTo(buffer);
        var length = prefix.Length;
        Utf8Formatter.TryFormat(seq, buffer[length..], out var written);
        length += written;
        Append(buffer, ref length, duplicate ? ",\"duplicate\": true}"u8 : "}"u8);
        return length;
    }

    private static void Append(Span<byte> buffer, ref int length, ReadOnlySpan<byte> text)
    {
        text.CopyTo(buffer[length..]);
        length += text.Length;
    }
}
