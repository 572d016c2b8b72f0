using System.Text;
using Nats.Server.Auth;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Clients;

/// <summary>
/// A client's PUB and HPUB (Go's processInboundClientMsg): mapping, the reserved-prefix and permission
/// checks, the match (through the connection's <see cref="MatchCache"/>), routing by the connection's
/// <see cref="Delivery.MessageRouter"/>, and the no-responders status. Runs on the client's read loop
/// only; the per-message path allocates nothing.
/// </summary>
internal sealed class PublishHandler
{
    private readonly ClientConnection _client;
    private readonly ConnectOptions _connect;
    private readonly ConnectionAuth _auth;
    private readonly Delivery.MessageRouter _router;
    private readonly ProtocolWriter _protocol;
    private readonly MatchCache _matches = new();

    // Where a mapped subject is written; reused so mapping does not allocate per message.
    private byte[] _mappedSubject = [];

    public PublishHandler(ClientConnection client, ConnectOptions connect, ConnectionAuth auth, Delivery.MessageRouter router, ProtocolWriter protocol)
    {
        _protocol = protocol;
        _client = client;
        _connect = connect;
        _auth = auth;
        _router = router;
    }

    /// <summary>The match cache belongs to one account's index: dropped when the client moves.</summary>
    public void OnAccountChanged() => _matches.Clear();

    /// <summary>PUB/HPUB — mirrors processInboundClientMsg and processMsgResults.</summary>
    public void Process(ReadOnlySpan<byte> buffer, in ClientCommand command, bool trace)
    {
        var client = _client;
        var subject = buffer[command.Subject];
        var reply = command.HasReply ? buffer[command.Reply] : default;
        client.InMsgs++;
        client.InBytes += command.PayloadSize;

        if (_connect.Pedantic && !SubjectRules.IsValidLiteral(subject))
        {
            _protocol.Enqueue(ErrorTexts.InvalidPublishSubject);
        }
        var account = client.Account;
        // Go maps in the parser, before processInboundClientMsg: permissions, the reserved-prefix check,
        // the match cache and the delivered MSG all see the mapped subject; the reply is unchanged.
        var mappings = account.Mappings;
        if (mappings is not null && mappings.TryMap(subject, ref _mappedSubject, out var mappedLength))
        {
            var mapped = _mappedSubject.AsSpan(0, mappedLength);
            if (trace)
            {
                TraceMapping(subject, mapped);
            }
            subject = mapped;
        }
        if (subject.Length > 5 && subject.StartsWith("_GR_."u8))
        {
            _protocol.Enqueue(Encoding.UTF8.GetBytes(ErrorTexts.PermissionsPublish(Encoding.UTF8.GetString(subject))));
            return;
        }
        if (_auth.Permissions is not null && _auth.PublishViolation(subject) is { } violation)
        {
            _protocol.Enqueue(violation);
            return;
        }
        if (!reply.IsEmpty && IsReservedReply(reply))
        {
            _protocol.Enqueue(Encoding.UTF8.GetBytes(ErrorTexts.PermissionsPublishReply(Encoding.UTF8.GetString(reply))));
            return;
        }
        if (_connect.Verbose)
        {
            _protocol.Enqueue("+OK\r\n"u8);
        }

        // The answer to a request that came over a gateway goes straight back to the cluster that asked (Go's handleGWReplyMap).
        if (account.GatewayReplies is { IsEmpty: false } replies && replies.Find(subject) is { } routed && _client.Gateways is { } gateways)
        {
            gateways.SendDirect(account.NameUtf8, routed, reply, command.HeaderSize, buffer.Slice(command.PayloadStart, command.PayloadSize + 2), client.Origin);
            return;
        }

        var result = _matches.Lookup(account.SubList, subject);
        var delivered = false;
        if (!result.IsEmpty)
        {
            var message = buffer.Slice(command.PayloadStart, command.PayloadSize + 2);
            var headerSizeToken = command.HeaderSize > 0 ? buffer[command.HeaderSizeToken] : default;
            delivered = _router.Route(result, account, subject, reply, command.HeaderSize, headerSizeToken, buffer[command.SizeToken], message);
        }
        if (!delivered && !reply.IsEmpty && _connect.NoResponders)
        {
            SendNoResponders(account.SubList, reply);
        }
    }

    private void TraceMapping(ReadOnlySpan<byte> original, ReadOnlySpan<byte> mapped)
    {
        var text = $"{Encoding.UTF8.GetString(original)} -> {Encoding.UTF8.GetString(mapped)}";
        _client.Trace("<<-", "MAPPING"u8, Encoding.UTF8.GetBytes(text));
    }

    private static bool IsReservedReply(ReadOnlySpan<byte> reply) =>
        (reply.Length > 4 && reply.StartsWith("_R_."u8))
        || (reply.Length > 8 && reply.StartsWith("$JS.ACK."u8))
        || (reply.Length > 5 && reply.StartsWith("_GR_."u8));

    /// <summary>The 503 status a requester gets when nobody listens (no_responders in CONNECT).</summary>
    private void SendNoResponders(SubList subList, ReadOnlySpan<byte> reply)
    {
        Subscription? own = null;
        foreach (var subscription in subList.Match(reply).Plain)
        {
            if (subscription.Client == _client)
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
        _protocol.Enqueue(span[..position]);
    }
}
