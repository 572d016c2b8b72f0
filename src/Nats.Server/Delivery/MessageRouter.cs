using System.Buffers;
using System.Buffers.Text;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Delivery;

/// <summary>
/// Routes one publisher's messages (Go's processMsgResults and processServiceImport): every
/// receiver and client subscriber of a match result, one member per queue group, then the import
/// routes (stream imports, service imports and their responses), which re-enter routing in the
/// other account. Owned by one connection (a client or the server's internal one) and used only on
/// its publishing thread, so its scratch buffers need no lock.
/// </summary>
internal sealed class MessageRouter
{
    private readonly MessageOrigin _origin;

    // The MSG line is the same for every receiver except the sid, so it is built once per publish
    // as a prefix ("MSG subject ") and a suffix (" [reply] size\r\n").
    private byte[] _lineScratch = new byte[512];
    private uint _queueRandom = (uint)Random.Shared.Next(1, int.MaxValue);

    private byte[] _internalScratch = new byte[1024];

    /// <summary>Set while the internal client publishes: its MSG lines carry a reply field even when empty, as Go's.</summary>
    private bool _replyAlwaysSet;

    public MessageRouter(MessageOrigin origin) => _origin = origin;

    /// <summary>Delivers one publish to a match result: receivers and clients, queue groups, then import routes.</summary>
    public bool Route(SubListResult result, Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message) =>
        Route(result, account, subject, subject, reply, headerSize, headerSizeToken, sizeToken, message);

    /// <summary>As <see cref="Route(SubListResult, Account, ReadOnlySpan{byte}, ReadOnlySpan{byte}, int, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>
    /// for a message matched on <paramref name="matched"/> and shown to subscribers under <paramref name="subject"/> (Go's
    /// c.pa.subject and c.pa.deliver: a JetStream delivery); the same span when they are one.</summary>
    private bool Route(SubListResult result, Account account, ReadOnlySpan<byte> matched, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        int headerSize, ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message)
    {
        // An HPUB with an empty header block is delivered as a plain MSG, as in Go.
        if (headerSize == 0)
        {
            headerSize = -1;
        }
        if (result.HasInternal || result.HasRemote || _routed)
        {
            return DeliverRouted(result, account, matched, subject, reply, headerSize, headerSizeToken, sizeToken, message, 0, RouteMode.All);
        }
        var line = BuildLineParts(subject, reply, headerSizeToken, sizeToken, headerSize > 0, out var prefixLength);
        return FanOut(result, account, line[..prefixLength], line[prefixLength..], message, headerSize, subject, reply);
    }

    /// <summary>Hands one message (its MSG line split around the sid) to every plain subscriber and one member per queue group.</summary>
    private bool FanOut(SubListResult result, Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message,
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
    private bool DeliverToQueueGroups(Subscription[][] groups, Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message,
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
    /// The one delivery step, by the kind of the subscription's receiver: a client takes the prebuilt
    /// MSG line (the zero-copy fast path, a direct call), a subsystem is handed the message's parts, a
    /// peer's interest is collected for the route. Import routes re-enter routing (depth, mode, the
    /// shared line scratch), so <see cref="DeliverRouted"/> runs them after every other receiver.
    /// </summary>
    private bool DeliverTo(Subscription subscription, Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix, ReadOnlySpan<byte> message,
        int headerSize, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply)
    {
        switch (subscription.Kind)
        {
            case ReceiverKind.Client:
                return Unsafe.As<ClientConnection>(subscription.Receiver).Delivery
                    .TryDeliver(_origin, subscription, prefix, suffix, message, headerSize, subject, reply);
            case ReceiverKind.Message:
                var headers = headerSize > 0 ? message[..headerSize] : default;
                var payload = message[(headerSize > 0 ? headerSize : 0)..^2];
                return Unsafe.As<MessageReceiver>(subscription.Receiver).Deliver(subscription, new Message(subject, reply, headers, payload, account, _origin));
            case ReceiverKind.Remote:
                // Import re-entries leave it to the peer's own imports (targets are only open for the publish itself).
                var peer = Unsafe.As<RemotePeer>(subscription.Receiver);
                return _routeTargetsOpen && MayForwardTo(peer) && _routeTargets.Add(peer, subscription.Queue);
            default:
                return false;
        }
    }

    /// <summary>
    /// Queue groups when peers are involved (Go's processMsgResults): a local publish draws one member
    /// over local and remote members, a remote one counting its weight, and a remote draw names the
    /// group in that route's RMSG; a routed message serves only the groups its RMSG named, and only
    /// with local members, so each group gets the message once cluster-wide.
    /// </summary>
    private bool DeliverToQueueGroupsClustered(Subscription[][] groups, Account account, ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message, int headerSize, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int depth)
    {
        var delivered = false;
        for (var g = 0; g < groups.Length; g++)
        {
            var members = groups[g];
            if (members.Length == 0)
            {
                continue;
            }
            if (_routed && !_anyQueue && !NamesQueue(members[0].Queue!))
            {
                continue;
            }
            var fromRoute = _source is { Role: PeerRole.Route };
            var start = fromRoute || depth > 0 ? (int)(NextQueueRandom() % (uint)members.Length) : WeightedStart(members);
            // Go prefers a local member over a leaf connection's (and, for a message from a route, over any
            // peer's); the first leaf member seen is where the message goes when no local member takes it.
            Subscription? fallback = null;
            // A gateway serves a group only when nobody in this cluster can (Go sends the unserved groups on).
            Subscription? gatewayFallback = null;
            var served = false;
            for (var i = 0; i < members.Length; i++)
            {
                var member = members[(start + i) % members.Length];
                if (member.Kind == ReceiverKind.Remote)
                {
                    if (!_routeTargetsOpen)
                    {
                        continue;
                    }
                    var peer = Unsafe.As<RemotePeer>(member.Receiver);
                    if (peer.Role == PeerRole.Gateway)
                    {
                        if (gatewayFallback is null && MayForwardTo(peer))
                        {
                            gatewayFallback = member;
                        }
                        continue;
                    }
                    if (peer.IsLeaf || fromRoute)
                    {
                        if (fallback is null && peer.IsLeaf && MayForwardTo(peer))
                        {
                            fallback = member;
                        }
                        continue;
                    }
                }
                if (DeliverTo(member, account, prefix, suffix, message, headerSize, subject, reply))
                {
                    served = true;
                    break;
                }
            }
            if (!served && fallback is not null)
            {
                served = DeliverTo(fallback, account, prefix, suffix, message, headerSize, subject, reply);
            }
            if (!served && gatewayFallback is not null)
            {
                served = DeliverTo(gatewayFallback, account, prefix, suffix, message, headerSize, subject, reply);
            }
            delivered |= served;
        }
        return delivered;
    }

    /// <summary>
    /// Go's audience rules for peers (processMsgResults): a client's publish goes to every route and leaf
    /// connection; a message from a route only to leaf connections we are the hub of; a message from a leaf
    /// connection never back to it (nor to another of the same remote cluster), and to routes only when we are
    /// its hub (a spoke cluster's servers each have their own connection to the hub).
    /// </summary>
    private bool MayForwardTo(RemotePeer peer)
    {
        var source = _source;
        if (peer.Role == PeerRole.Gateway)
        {
            // Only what originates in this cluster (clients, the server itself, leaf connections) crosses a gateway.
            return source is null || source.IsLeaf;
        }
        if (source is null)
        {
            return true;
        }
        if (source.Role == PeerRole.Gateway)
        {
            // From another cluster: to our routes and leaf connections, the gateway itself was excluded above.
            return true;
        }
        if (source.Role == PeerRole.Route)
        {
            // Go's cluster-wide no echo: a message a leaf cluster sent never goes back to that cluster.
            return peer.Role == PeerRole.HubLeaf &&
                (_leafOriginLength == 0 || !peer.RemoteClusterUtf8.AsSpan().SequenceEqual(_leafOrigin.AsSpan(0, _leafOriginLength)));
        }
        if (ReferenceEquals(peer, source))
        {
            return false;
        }
        if (peer.Role == PeerRole.Route)
        {
            return source.Role == PeerRole.HubLeaf;
        }
        var cluster = source.RemoteCluster;
        return cluster.Length == 0 || cluster != peer.RemoteCluster;
    }

    /// <summary>The member a weighted draw lands on: a local member counts once, a remote one its RS+ weight.</summary>
    private int WeightedStart(Subscription[] members)
    {
        long total = 0;
        foreach (var member in members)
        {
            total += member.Kind != ReceiverKind.Remote ? 1 : Math.Max(1, member.Weight);
        }
        var pick = (long)(NextQueueRandom() % (ulong)total);
        for (var i = 0; i < members.Length; i++)
        {
            pick -= members[i].Kind != ReceiverKind.Remote ? 1 : Math.Max(1, members[i].Weight);
            if (pick < 0)
            {
                return i;
            }
        }
        return 0;
    }

    /// <summary>Whether the RMSG being routed named <paramref name="queue"/> in its queue list.</summary>
    private bool NamesQueue(byte[] queue)
    {
        var rest = _routedQueues.AsSpan(0, _routedQueuesLength);
        while (!rest.IsEmpty)
        {
            var space = rest.IndexOf((byte)' ');
            var name = space < 0 ? rest : rest[..space];
            if (name.SequenceEqual(queue))
            {
                return true;
            }
            rest = space < 0 ? default : rest[(space + 1)..];
        }
        return false;
    }

    // Set while a message that came in from a peer is routed (Go's c.kind == ROUTER or LEAF): only the queue
    // groups it names; which other peers it may go on to depends on the source (MayForwardTo).
    private bool _routed;

    // A routed message that serves every queue group, not only the ones it names (see RouteFromPeer's mapped).
    private bool _anyQueue;
    private RemotePeer? _source;
    private byte[] _leafOrigin = [];
    private int _leafOriginLength;
    private byte[] _routedQueues = new byte[64];
    private int _routedQueuesLength;

    // The routes a local publish goes to, each with the queue groups it serves (Go's c.in.rts).
    private readonly Routes.RouteTargets _routeTargets = new();
    private bool _routeTargetsOpen;

    /// <summary>
    /// Delivers a message a peer sent (RMSG/HMSG) to this server's subscribers in <paramref name="account"/>:
    /// plain subscribers, and the queue groups named in <paramref name="queues"/> (space-separated).
    /// <paramref name="message"/> is the header block and payload followed by CRLF.
    /// </summary>
    /// <param name="mapped">A leaf's message whose subject an account mapping changed: without queue names it serves this
    /// server's queue groups like a client's publish (Go's pmrIgnoreEmptyQueueFilter), as the group it was meant for is
    /// on the mapped subject.</param>
    public bool RouteFromPeer(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, RemotePeer source, ReadOnlySpan<byte> leafOrigin = default, bool mapped = false)
    {
        var result = account.SubList.Match(subject);
        if (result.IsEmpty)
        {
            return false;
        }
        if (_routedQueues.Length < queues.Length)
        {
            _routedQueues = new byte[Math.Max(queues.Length, _routedQueues.Length * 2)];
        }
        queues.CopyTo(_routedQueues);
        _routedQueuesLength = queues.Length;
        if (_leafOrigin.Length < leafOrigin.Length)
        {
            _leafOrigin = new byte[leafOrigin.Length];
        }
        leafOrigin.CopyTo(_leafOrigin);
        _leafOriginLength = leafOrigin.Length;
        Span<byte> headerSizeToken = stackalloc byte[11];
        Span<byte> sizeToken = stackalloc byte[11];
        Utf8Formatter.TryFormat(Math.Max(headerSize, 0), headerSizeToken, out var headerSizeLength);
        Utf8Formatter.TryFormat(message.Length - 2, sizeToken, out var sizeLength);
        var shown = subject;
        if (JetStreamDelivery.TrySplit(reply, out var deliverSubject, out var ackReply))
        {
            shown = deliverSubject;
            reply = ackReply;
        }
        _routed = true;
        _anyQueue = mapped && queues.IsEmpty;
        _source = source;
        try
        {
            return Route(result, account, subject, shown, reply, headerSize, headerSizeToken[..headerSizeLength], sizeToken[..sizeLength], message);
        }
        finally
        {
            _routed = false;
            _anyQueue = false;
            _source = null;
        }
    }

    private byte[] _deliveryReplyScratch = new byte[128];

    /// <summary>
    /// Sends to the routes, leaf and gateway connections collected for this publish (Go's sendToRoutesOrLeafs). A JetStream
    /// delivery goes on the subject it was matched on (the deliver subject or pull inbox), the subject its subscribers see
    /// appended to the reply after an '@' (<see cref="JetStreamDelivery"/>); a message from a peer that carried one goes on as it came.
    /// </summary>
    private void FlushRouteTargets(Account account, ReadOnlySpan<byte> matched, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> message)
    {
        if (reply.IsEmpty || SameSpan(matched, subject))
        {
            _routeTargets.Flush(account, matched, reply, headerSize, message, _origin);
            return;
        }
        var length = JetStreamDelivery.Join(reply, subject, ref _deliveryReplyScratch);
        _routeTargets.Flush(account, matched, _deliveryReplyScratch.AsSpan(0, length), headerSize, message, _origin);
    }

    private static bool SameSpan(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b) =>
        a.Length == b.Length && Unsafe.AreSame(ref MemoryMarshal.GetReference(a), ref MemoryMarshal.GetReference(b));

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

    // Requests crossing imports back and forth stop here (Go detects the cycle on the export).
    private const int MaxImportDepth = 8;

    private static ReadOnlySpan<byte> RequestInfoHeader => "Nats-Request-Info:"u8;

    private enum RouteMode
    {
        /// <summary>A client's own publish: every route applies.</summary>
        All,

        /// <summary>Arrived through a service import or as a response: stream imports do not re-export it (Go's pmrMsgImportedFromService).</summary>
        FromService,

        /// <summary>Delivered through a stream import: only the importer's clients, no further routing.</summary>
        ClientsOnly,
    }

    /// <param name="matched">The subject <paramref name="result"/> was matched on, peers get the message on it: the same span as
    /// <paramref name="subject"/> except for a JetStream delivery.</param>
    private bool DeliverRouted(SubListResult result, Account account, ReadOnlySpan<byte> matched, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        int headerSize, ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message, int depth, RouteMode mode)
    {
        var line = BuildLineParts(subject, reply, headerSizeToken, sizeToken, headerSize > 0, out var prefixLength);
        var prefix = line[..prefixLength];
        var suffix = line[prefixLength..];
        var delivered = false;
        // The publish itself reaches peers, once per peer; of an import's re-entries only a service request or
        // response does (a stream import is applied again by each peer that holds its shadow interest, while a
        // service import is mapped only by the server its requester is on, as in Go's processServiceImport).
        var collectRoutes = result.HasRemote && (depth == 0 || mode == RouteMode.FromService);
        _routeTargetsOpen = collectRoutes;
        foreach (var subscription in result.Plain)
        {
            if (subscription.Kind != ReceiverKind.Import)
            {
                delivered |= DeliverTo(subscription, account, prefix, suffix, message, headerSize, subject, reply);
            }
        }
        delivered |= result.HasRemote || _routed
            ? DeliverToQueueGroupsClustered(result.QueueGroups, account, prefix, suffix, message, headerSize, subject, reply, depth)
            : DeliverToQueueGroups(result.QueueGroups, account, prefix, suffix, message, headerSize, subject, reply);
        _routeTargetsOpen = false;
        if (collectRoutes)
        {
            FlushRouteTargets(account, matched, subject, reply, headerSize, message);
        }
        if (mode == RouteMode.ClientsOnly || !result.HasInternal || depth >= MaxImportDepth)
        {
            return delivered;
        }
        foreach (var subscription in result.Plain)
        {
            switch (subscription.Receiver)
            {
                case StreamImportRoute stream when mode == RouteMode.All && !stream.Invalid:
                    delivered |= ForwardStream(stream, matched, subject, reply, headerSize, headerSizeToken, sizeToken, message);
                    break;
                case ServiceImportRoute when _source is { Role: PeerRole.Route or PeerRole.Gateway }:
                    // The requester's own server mapped it already; a route or gateway copy is only for its real subscribers.
                    break;
                case ServiceImportRoute { Invalid: true }:
                    delivered = true;
                    break;
                case ServiceImportRoute { IsJetStreamApi: true } when JetStreamApiImport.AnsweredInPlace(subject):
                    delivered = true;
                    break;
                case ServiceImportRoute service:
                    delivered |= ForwardService(service, subject, reply, headerSize, message, depth);
                    break;
                case ResponseRoute response:
                    delivered |= ForwardResponse(response, subject, headerSize, headerSizeToken, sizeToken, message, depth);
                    break;
            }
        }
        return delivered;
    }

    /// <summary>A message of the exporter's subject space, shown to the importer's subscribers under the local subject; a
    /// JetStream delivery's deliver subject is what is imported (mapped), its stored subject stays what clients see (Go's role swap).</summary>
    private bool ForwardStream(StreamImportRoute route, ReadOnlySpan<byte> matched, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        int headerSize, ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message)
    {
        var delivery = !SameSpan(matched, subject);
        var mapped = route.Map(matched, ref _importScratch);
        var result = route.Importer.SubList.Match(mapped);
        return !result.IsEmpty && DeliverRouted(result, route.Importer, mapped, delivery ? subject : mapped, reply, headerSize, headerSizeToken,
            sizeToken, message, MaxImportDepth, RouteMode.ClientsOnly);
    }

    private byte[]? _importScratch;

    /// <summary>
    /// A request published in the importing account: delivered in the exporter on the exported subject,
    /// with the reply replaced by a response subject of the exporter and the requester's identity in a
    /// Nats-Request-Info header. Counts as delivered even when no responder listens, as in Go (so no 503).
    /// </summary>
    private bool ForwardService(ServiceImportRoute route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> message, int depth)
    {
        byte[]? subjectScratch = null;
        var mapped = route.Map(subject, ref subjectScratch);
        ResponseEntry? entry = null;
        if (!reply.IsEmpty)
        {
            entry = route.Exporter.Responses.Create(route.Importer, reply, route);
        }
        var forwardedReply = entry is null ? default : entry.Subject.AsSpan();

        byte[]? rented = null;
        var forwarded = message;
        var forwardedHeaderSize = headerSize;
        if (depth == 0)
        {
            var info = _origin.RequestInfoJson(route.Importer.Name, route.Share, route.ToSystemAccount);
            var header = headerSize > 0 ? message[..(headerSize - 2)] : "NATS/1.0\r\n"u8;
            var body = headerSize > 0 ? message[headerSize..] : message;
            rented = ArrayPool<byte>.Shared.Rent(header.Length + RequestInfoHeader.Length + info.Length + 6 + body.Length);
            var span = rented.AsSpan();
            var position = CopyHeaderWithout(header, span);
            RequestInfoHeader.CopyTo(span[position..]);
            position += RequestInfoHeader.Length;
            span[position++] = (byte)' ';
            info.CopyTo(span[position..]);
            position += info.Length;
            "\r\n\r\n"u8.CopyTo(span[position..]);
            position += 4;
            forwardedHeaderSize = position;
            body.CopyTo(span[position..]);
            position += body.Length;
            forwarded = span[..position];
        }

        Span<byte> headerSizeToken = stackalloc byte[12];
        Span<byte> sizeToken = stackalloc byte[12];
        Utf8Formatter.TryFormat(Math.Max(forwardedHeaderSize, 0), headerSizeToken, out var headerSizeLength);
        Utf8Formatter.TryFormat(forwarded.Length - 2, sizeToken, out var sizeLength);

        var result = route.Exporter.SubList.Match(mapped);
        var delivered = !result.IsEmpty && DeliverRouted(result, route.Exporter, mapped, mapped, forwardedReply, forwardedHeaderSize,
            headerSizeToken[..headerSizeLength], sizeToken[..sizeLength], forwarded, depth + 1, RouteMode.FromService);
        if (!delivered && entry is not null)
        {
            route.Exporter.Responses.Remove(entry);
        }
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
        return true;
    }

    /// <summary>A responder answered on an <c>_R_</c> subject: back to the requester's reply subject in its own account.</summary>
    private bool ForwardResponse(ResponseRoute route, ReadOnlySpan<byte> subject, int headerSize, ReadOnlySpan<byte> headerSizeToken,
        ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message, int depth)
    {
        var responses = route.Responses;
        var entry = responses.Find(subject);
        if (entry is null)
        {
            return false;
        }
        // An empty message ends a streamed or chunked response, as in Go.
        var singleton = entry.Import.ResponseType == ServiceResponseType.Singleton || message.Length == 2;
        if (singleton && !responses.Remove(entry))
        {
            // Another response won the race for a one-shot mapping.
            return false;
        }
        var result = entry.Requester.SubList.Match(entry.Reply);
        var delivered = !result.IsEmpty && DeliverRouted(result, entry.Requester, entry.Reply, entry.Reply, default, headerSize, headerSizeToken, sizeToken, message,
            depth + 1, RouteMode.FromService);
        if (!delivered)
        {
            responses.Remove(entry);
        }
        else if (!singleton)
        {
            Volatile.Write(ref entry.Touched, System.Diagnostics.Stopwatch.GetTimestamp());
        }
        return delivered;
    }

    /// <summary>Copies a header block (status line and fields, without the closing blank line) minus any client-supplied request info.</summary>
    private static int CopyHeaderWithout(ReadOnlySpan<byte> header, Span<byte> destination)
    {
        var position = 0;
        var rest = header;
        while (!rest.IsEmpty)
        {
            var end = rest.IndexOf("\r\n"u8);
            var lineLength = end < 0 ? rest.Length : end + 2;
            var line = rest[..lineLength];
            if (!line.StartsWith(RequestInfoHeader))
            {
                line.CopyTo(destination[position..]);
                position += line.Length;
            }
            rest = rest[lineLength..];
        }
        return position;
    }

    /// <summary>
    /// Routes a message the server publishes into <paramref name="account"/> (the caller flushes
    /// the receiving clients). <paramref name="replySet"/> writes a reply field even when empty, as Go's internal sender.
    /// </summary>
    public bool RouteInternal(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers,
        ReadOnlySpan<byte> payload, bool replySet) =>
        RouteInternal(account, subject, subject, reply, headers, payload, replySet);

    /// <summary>Matches subscribers on <paramref name="route"/> but shows them <paramref name="subject"/>, as Go's
    /// JetStream delivers a stored message to a push consumer's deliver subject or a pull request's inbox.</summary>
    public bool RouteInternal(Account account, ReadOnlySpan<byte> route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, bool replySet)
    {
        var result = account.SubList.Match(route);
        if (result.IsEmpty)
        {
            return false;
        }
        var needed = headers.Length + payload.Length + 2;
        if (_internalScratch.Length < needed)
        {
            _internalScratch = new byte[Math.Max(needed, _internalScratch.Length * 2)];
        }
        var message = _internalScratch.AsSpan(0, needed);
        headers.CopyTo(message);
        payload.CopyTo(message[headers.Length..]);
        message[^2] = (byte)'\r';
        message[^1] = (byte)'\n';
        Span<byte> headerSizeToken = stackalloc byte[11];
        Span<byte> sizeToken = stackalloc byte[11];
        Utf8Formatter.TryFormat(headers.Length, headerSizeToken, out var headerSizeLength);
        Utf8Formatter.TryFormat(headers.Length + payload.Length, sizeToken, out var sizeLength);
        _replyAlwaysSet = replySet;
        bool delivered;
        try
        {
            delivered = Route(result, account, route, subject, reply, headers.Length, headerSizeToken[..headerSizeLength],
                sizeToken[..sizeLength], message);
        }
        finally
        {
            _replyAlwaysSet = false;
        }
        return delivered;
    }
}
