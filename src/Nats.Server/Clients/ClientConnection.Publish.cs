using System.Text;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    private const int MaxCachedResults = 512;

    // Per-connection match cache (Go's c.in.results): no lock on a hit, dropped whenever the
    // account's subscription index changes.
    private readonly Dictionary<byte[], SubListResult> _resultCache = new(ByteKeyComparer.Instance);
    private readonly Dictionary<byte[], SubListResult>.AlternateLookup<ReadOnlySpan<byte>> _resultCacheLookup;
    private long _resultCacheGeneration = -1;

    // The MSG line is the same for every receiver except the sid, so it is built once per publish
    // as a prefix ("MSG subject ") and a suffix (" [reply] size\r\n").
    private byte[] _lineScratch = new byte[512];
    private uint _queueRandom = (uint)Random.Shared.Next(1, int.MaxValue);

    // Where a mapped subject is written; reused so mapping does not allocate per message.
    private byte[] _mappedSubject = [];

    /// <summary>PUB/HPUB — mirrors processInboundClientMsg and processMsgResults.</summary>
    private void ProcessPublish(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        var subject = buffer[command.Subject];
        var reply = command.HasReply ? buffer[command.Reply] : default;
        InMsgs++;
        InBytes += command.PayloadSize;

        if (_connect.Pedantic && !SubjectValidation.IsValidLiteralSubject(subject))
        {
            EnqueueProtocol(ErrorTexts.InvalidPublishSubject);
        }
        // Go maps in the parser, before processInboundClientMsg: permissions, the reserved-prefix check,
        // the match cache and the delivered MSG all see the mapped subject; the reply is unchanged.
        var mappings = Account.Mappings;
        if (mappings is not null && mappings.TryMap(subject, ref _mappedSubject, out var mappedLength))
        {
            var mapped = _mappedSubject.AsSpan(0, mappedLength);
            if (_trace)
            {
                TraceMapping(subject, mapped);
            }
            subject = mapped;
        }
        if (subject.Length > 5 && subject.StartsWith("_GR_."u8))
        {
            EnqueueProtocol(Encoding.UTF8.GetBytes(ErrorTexts.PermissionsPublish(Encoding.UTF8.GetString(subject))));
            return;
        }
        if (_permissions is not null && !CheckPublishPermission(subject))
        {
            return;
        }
        if (!reply.IsEmpty && IsReservedReply(reply))
        {
            EnqueueProtocol(Encoding.UTF8.GetBytes(ErrorTexts.PermissionsPublishReply(Encoding.UTF8.GetString(reply))));
            return;
        }
        if (_connect.Verbose)
        {
            EnqueueProtocol("+OK\r\n"u8);
        }

        var result = Lookup(subject);
        var delivered = false;
        if (!result.IsEmpty)
        {
            var message = buffer.Slice(command.PayloadStart, command.PayloadSize + 2);
            var headerSizeToken = command.HeaderSize > 0 ? buffer[command.HeaderSizeToken] : default;
            delivered = DeliverToResult(result, Account, subject, reply, command.HeaderSize, headerSizeToken, buffer[command.SizeToken], message);
        }
        if (!delivered && !reply.IsEmpty && _connect.NoResponders)
        {
            SendNoResponders(reply);
        }
    }

    private void TraceMapping(ReadOnlySpan<byte> original, ReadOnlySpan<byte> mapped)
    {
        var text = $"{Encoding.UTF8.GetString(original)} -> {Encoding.UTF8.GetString(mapped)}";
        Trace("<<-", "MAPPING"u8, Encoding.UTF8.GetBytes(text));
    }

    private static bool IsReservedReply(ReadOnlySpan<byte> reply) =>
        (reply.Length > 4 && reply.StartsWith("_R_."u8))
        || (reply.Length > 8 && reply.StartsWith("$JS.ACK."u8))
        || (reply.Length > 5 && reply.StartsWith("_GR_."u8));

    private SubListResult Lookup(ReadOnlySpan<byte> subject)
    {
        var subList = Account.SubList;
        var generation = subList.GenerationId;
        if (generation != _resultCacheGeneration)
        {
            _resultCache.Clear();
            _resultCacheGeneration = generation;
        }
        else if (_resultCacheLookup.TryGetValue(subject, out var cached))
        {
            return cached;
        }
        var result = subList.Match(subject);
        if (_resultCache.Count >= MaxCachedResults)
        {
            _resultCache.Clear();
        }
        _resultCacheLookup[subject] = result;
        return result;
    }

    private bool DeliverToResult(SubListResult result, Accounts.Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message)
    {
        // An HPUB with an empty header block is delivered as a plain MSG, as in Go.
        if (headerSize == 0)
        {
            headerSize = -1;
        }
        if (result.HasInternal)
        {
            return DeliverRouted(result, account, subject, reply, headerSize, headerSizeToken, sizeToken, message, 0, RouteMode.All);
        }
        var line = BuildLineParts(subject, reply, headerSizeToken, sizeToken, headerSize > 0, out var prefixLength);
        return FanOut(result, account, line[..prefixLength], line[prefixLength..], message, headerSize, subject, reply);
    }

    /// <summary>Hands one message (its MSG line split around the sid) to every plain subscriber and one member per queue group.</summary>
    private bool FanOut(SubListResult result, Accounts.Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message,
        int headerSize, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply)
    {
        var delivered = false;

        foreach (var subscription in result.Plain)
        {
            delivered |= DeliverTo(subscription, account, prefix, suffix, message, headerSize, subject, reply);
        }
        return DeliverToQueueGroups(result.QueueGroups, account, prefix, suffix, message, headerSize, subject, reply) | delivered;
    }

    /// <summary>One member of each queue group, starting at a random member and moving on while deliveries are refused.</summary>
    private bool DeliverToQueueGroups(Subscription[][] groups, Accounts.Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message,
        int headerSize, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply)
    {
        var delivered = false;
        for (var g = 0; g < groups.Length; g++)
        {
            var members = groups[g];
            var start = (int)(NextQueueRandom() % (uint)members.Length);
            for (var i = 0; i < members.Length; i++)
            {
                var member = members[(start + i) % members.Length];
                if (DeliverTo(member, account, prefix, suffix, message, headerSize, subject, reply))
                {
                    delivered = true;
                    break;
                }
            }
        }
        return delivered;
    }

    /// <summary>
    /// The one delivery step: a receiver (subsystem or server handler) is handed the message's parts,
    /// a client takes the prebuilt MSG line (the zero-copy fast path). Import routes are not receivers:
    /// they re-enter routing (depth, mode, the shared line scratch), so <see cref="DeliverRouted"/>
    /// runs them after every receiver of the result.
    /// </summary>
    private bool DeliverTo(Subscription subscription, Accounts.Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message,
        int headerSize, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply)
    {
        if (subscription.Receiver is { } receiver)
        {
            var headers = headerSize > 0 ? message[..headerSize] : default;
            var payload = message[(headerSize > 0 ? headerSize : 0)..^2];
            return receiver.Deliver(subscription, new Delivery.Message(subject, reply, headers, payload, account, this));
        }
        // A client takes the prebuilt line; an import route (no client) is run by DeliverRouted instead.
        return subscription.Client is { } client && client.TryDeliver(this, subscription, prefix, suffix, message, headerSize, subject, reply);
    }

    private uint NextQueueRandom()
    {
        // xorshift32: cheap and good enough to spread a queue group's load.
        var x = _queueRandom;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        _queueRandom = x;
        return x;
    }

    /// <summary>Writes the publish's MSG/HMSG line, split around the sid, into scratch space (see <see cref="MsgLine"/>).</summary>
    private ReadOnlySpan<byte> BuildLineParts(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headerSizeToken,
        ReadOnlySpan<byte> sizeToken, bool withHeaders, out int prefixLength)
    {
        var maxLength = MsgLine.MaxLength(subject.Length, reply.Length, headerSizeToken.Length, sizeToken.Length);
        if (_lineScratch.Length < maxLength)
        {
            _lineScratch = new byte[Math.Max(maxLength, _lineScratch.Length * 2)];
        }
        var length = MsgLine.WriteSplit(_lineScratch, subject, reply, _replyAlwaysSet, withHeaders ? headerSizeToken : default, sizeToken,
            out prefixLength);
        return _lineScratch.AsSpan(0, length);
    }

    /// <summary>The 503 status a requester gets when nobody listens (no_responders in CONNECT).</summary>
    private void SendNoResponders(ReadOnlySpan<byte> reply)
    {
        Subscription? own = null;
        foreach (var subscription in Account.SubList.Match(reply).Plain)
        {
            if (subscription.Client == this)
            {
                own = subscription;
                break;
            }
        }
        if (own is null)
        {
            return;
        }
        const int headerSize = 16; // "NATS/1.0 503\r\n\r\n"
        Span<byte> span = stackalloc byte[MsgLine.MaxLength(reply.Length, 0, own.Sid.Length) + headerSize + 2];
        var position = MsgLine.Write(span, reply, own.Sid, default, headerSize, headerSize);
        "NATS/1.0 503\r\n\r\n\r\n"u8.CopyTo(span[position..]);
        position += headerSize + 2;
        EnqueueProtocol(span[..position]);
    }
}
