using System.Buffers.Binary;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Storage;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Messages a replica's store lacks below its group's log (a replica added by a scale-up, whose group log starts after
/// the messages the stream already held), copied from the group's active leader, as Go's <c>$JSC.CATCHUP</c> does after
/// a stream snapshot. A follower that meets an entry numbered past its store asks <c>$JSC.CATCHUP.&lt;group&gt;</c> (system
/// account) for the missing range, in chunks, before applying the entry; only the active leader answers.
/// </summary>
/// <remarks>
/// Request: from and to (u64 each, little-endian). Answer: the last sequence it covers (u64), then each message present
/// in that range as a u32 length and a streamMsgOp entry (its lseq one below the message's sequence). Sequences covered
/// but not sent were deleted on the leader and are skipped. Not Go's layout (Go streams its catch-up messages one by one
/// with flow control).
/// </remarks>
internal sealed class StreamCatchup(MetaGroup meta, JsStream stream, string group, ILogger logger)
{
    private const int MaxAnswerBytes = 1 << 20;
    private static readonly TimeSpan AnswerTimeout = TimeSpan.FromSeconds(5);
    private const int Attempts = 3;

    private Delivery.InternalPublisher? _publisher;
    private Account? _system;
    private byte[] _subject = [];
    private byte[] _inbox = [];
    private TaskCompletionSource<byte[]>? _answer;
    private ClientConnection? _client;

    /// <summary>Subscribes this member's catch-up answers and, for when it leads, the group's requests.</summary>
    public void Start(Account system, Func<bool> leads)
    {
        _system = system;
        _publisher = meta.Server.CreateInternalPublisher();
        _subject = Encoding.ASCII.GetBytes("$JSC.CATCHUP." + group);
        var inbox = $"$JSC.CATCHUP.R.{NrgTransport.Inbox(group, meta.PeerId)}";
        _inbox = Encoding.ASCII.GetBytes(inbox);
        _client = InternalClient.Create(meta.Server, meta.Server.NextClientId(), system, logger);
        InternalClient.Subscribe(_client, "$JSC.CATCHUP." + group, "jsc-catchup", (_, _, _, reply, _, body) =>
        {
            if (leads() && !reply.IsEmpty && body.Length == 16)
            {
                lock (_servedAt)
                {
                    _servedAt[Encoding.ASCII.GetString(reply)] = Environment.TickCount64;
                }
                var answer = Serve(BinaryPrimitives.ReadUInt64LittleEndian(body), BinaryPrimitives.ReadUInt64LittleEndian(body[8..]));
                Publish(reply, default, answer);
            }
            return true;
        });
        InternalClient.Subscribe(_client, inbox, "jsc-catchup-r", (_, _, _, _, _, body) =>
        {
            Volatile.Read(ref _answer)?.TrySetResult(body.ToArray());
            return true;
        });
    }

    // When this member, leading, last answered a catch-up request, by the requester's reply inbox.
    private readonly Dictionary<string, long> _servedAt = [];

    /// <summary>Whether <paramref name="peer"/> asked this leader for messages within <paramref name="within"/>: a replica
    /// still copying them cannot lead, so a hand-over passes it by.</summary>
    public bool CopiedRecently(string peer, TimeSpan within)
    {
        var inbox = $"$JSC.CATCHUP.R.{NrgTransport.Inbox(group, peer)}";
        lock (_servedAt)
        {
            return _servedAt.TryGetValue(inbox, out var at) && Environment.TickCount64 - at <= (long)within.TotalMilliseconds;
        }
    }

    public void Stop()
    {
        if (_client is { } client && _system is { } system)
        {
            client.Subscriptions.RemoveAll(system);
        }
        Volatile.Read(ref _answer)?.TrySetCanceled();
    }

    private void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> payload)
    {
        if (_publisher is not { } publisher || _system is not { } system)
        {
            return;
        }
        lock (publisher)
        {
            publisher.Publish(system, subject, reply, default, payload);
        }
    }

    /// <summary>The leader's answer: messages from <paramref name="from"/> up to <paramref name="to"/>, bounded in size.</summary>
    private byte[] Serve(ulong from, ulong to)
    {
        using var buffer = new MemoryStream();
        Span<byte> u64 = stackalloc byte[8];
        buffer.Write(u64);
        var store = stream.Store;
        var through = Math.Min(to, store.State().LastSeq);
        var seq = from;
        var reuse = new StoredMessage();
        while (seq <= through)
        {
            if (store.LoadNextMsg("", seq, reuse) is not { } message || message.Sequence > through)
            {
                seq = through + 1;
                break;
            }
            var entry = StreamMsgEntry.Encode(message.Sequence - 1, message.Timestamp, message.Subject, default, message.Header.Span, message.Data.Span);
            BinaryPrimitives.WriteUInt32LittleEndian(u64, (uint)entry.Length);
            buffer.Write(u64[..4]);
            buffer.Write(entry);
            seq = message.Sequence + 1;
            if (buffer.Length >= MaxAnswerBytes)
            {
                break;
            }
        }
        var bytes = buffer.ToArray();
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, seq - 1);
        return bytes;
    }

    /// <summary>
    /// Fills this replica's store up to <paramref name="to"/> from the leader (on the group's RAFT loop, which waits).
    /// False when the leader did not answer in time: the caller then skips the gap as before.
    /// </summary>
    public bool CatchUp(ulong to)
    {
        var store = stream.Store;
        var failures = 0;
        var last = store.State().LastSeq;
        if (last < to)
        {
            logger.LogInformation("JetStream cluster catching up stream {Stream} from {From} to {To}", stream.LogName, last + 1, to);
        }
        while (last < to)
        {
            var answer = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            Volatile.Write(ref _answer, answer);
            var request = new byte[16];
            BinaryPrimitives.WriteUInt64LittleEndian(request, last + 1);
            BinaryPrimitives.WriteUInt64LittleEndian(request.AsSpan(8), to);
            Publish(_subject, _inbox, request);
            bool answered;
            try
            {
                answered = answer.Task.Wait(AnswerTimeout) && answer.Task.Result.Length >= 8;
            }
            catch (AggregateException)
            {
                // Stopped: the group is going away.
                return false;
            }
            if (!answered)
            {
                if (++failures >= Attempts)
                {
                    logger.LogWarning("JetStream cluster catch-up of stream {Stream} stopped at {Last} of {To}: no answer from the leader",
                        stream.LogName, last, to);
                    return false;
                }
                continue;
            }
            last = Apply(answer.Task.Result, last);
        }
        return true;
    }

    private ulong Apply(byte[] answer, ulong last)
    {
        var store = stream.Store;
        var through = BinaryPrimitives.ReadUInt64LittleEndian(answer);
        var at = 8;
        lock (stream.Gate)
        {
            while (at + 4 <= answer.Length)
            {
                var length = (int)BinaryPrimitives.ReadUInt32LittleEndian(answer.AsSpan(at));
                if (length < 0 || at + 4 + length > answer.Length || !StreamMsgEntry.TryDecode(answer.AsSpan(at + 4, length), out var entry))
                {
                    break;
                }
                at += 4 + length;
                var seq = entry.LastSeq + 1;
                if (seq <= last)
                {
                    continue;
                }
                if (seq > last + 1)
                {
                    store.SkipMsgs(last + 1, seq - last - 1);
                }
                store.StoreRawMsg(Encoding.UTF8.GetString(entry.Subject), entry.Header, entry.Body, seq, entry.Timestamp);
                last = seq;
            }
            if (through > last)
            {
                store.SkipMsgs(last + 1, through - last);
                last = through;
            }
            store.FlushAllPending();
        }
        // These messages are in no log of this replica (the store is log-backed: appends join no sync round), so they
        // are made durable here, before the log entries after them are acknowledged.
        store.WhenDurable().Wait();
        logger.LogDebug("JetStream cluster stream {Stream} caught up through {Last}", stream.LogName, last);
        return last;
    }

    /// <summary>Our own entry (not one of Go's ops): the leader's last sequence when it took over, so that a replica whose
    /// store is behind the log's start catches up even before the next publish.</summary>
    public const byte SyncOp = 0xF0;

    public static byte[] SyncEntry(ulong lastSeq)
    {
        var entry = new byte[9];
        entry[0] = SyncOp;
        BinaryPrimitives.WriteUInt64LittleEndian(entry.AsSpan(1), lastSeq);
        return entry;
    }
}
