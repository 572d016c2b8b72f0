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

    private readonly Delivery.MessageRouter _router;

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
            delivered = _router.Route(result, Account, subject, reply, command.HeaderSize, headerSizeToken, buffer[command.SizeToken], message);
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
