using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Protocol;
using Nats.Server.Routes;
using static Nats.Server.Routes.PeerTokens;

namespace Nats.Server.LeafNodes;

/// <summary>
/// One leaf connection (Go's LEAF client), either role: accepted from a spoke (we are its hub) or dialled to a
/// hub through a remote (we are the spoke). The handshake (INFO/CONNECT and the hub's second INFO), the read
/// loop and its parser for LS+/LS-, LMSG/HMSG, PING/PONG, INFO, CONNECT and -ERR. The peer's interest lives in
/// <see cref="RemoteInterest"/> as subscriptions of the bound account; what we tell the peer is
/// <see cref="LeafSubjectMap"/>; messages go out on the same <see cref="RouteOutbound"/> a route has (LMSG, no account).
/// </summary>
internal sealed class LeafConnection : Delivery.RemotePeer, Transport.IRemoteLinkOwner, Transport.ILiveLink
{
    // Go's DEFAULT_LEAFNODE_INFO_WAIT and connectProcessTimeout.
    private static readonly TimeSpan InfoWait = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan ConnectProcessTimeout = TimeSpan.FromSeconds(2);

    private readonly LeafNodeService _service;
    private readonly ILogger _logger;
    private readonly RemoteInterest _interest;
    private bool _connectReceived;

    // Where a mapped subject of an incoming message is written; reused so mapping does not allocate per message.
    private byte[] _mappedSubject = [];
    private bool _infoReceived;
    private bool _peerHeaders;
    private long _deadline;
    private string? _nonce;
    private string _remoteCluster = "";
    private byte[] _remoteClusterUtf8 = [];
    private readonly LeafSolicitor? _solicitor;

    /// <summary>A leaf connection over TCP: TLS, when either side asks for it, starts after the hub's plain INFO.</summary>
    public LeafConnection(LeafNodeService service, Socket socket, ulong id, LeafSolicitor? solicitor, Uri? url, ILogger logger)
        : this(service, solicitor, url, logger, self => new Transport.RemoteLink(self, service.Server, socket, id, "leafnode", "lid", logger, upgradable: true))
    {
    }

    /// <summary>A leaf connection over a WebSocket (its TLS, if any, is the HTTPS of the upgrade).</summary>
    public LeafConnection(LeafNodeService service, Transport.ClientTransport transport, System.Net.IPEndPoint? remote, ulong id, LeafSolicitor? solicitor,
        Uri? url, ILogger logger)
        : this(service, solicitor, url, logger, self => new Transport.RemoteLink(self, service.Server, transport, remote, id, "leafnode", "lid", logger))
    {
    }

    private LeafConnection(LeafNodeService service, LeafSolicitor? solicitor, Uri? url, ILogger logger, Func<LeafConnection, Transport.RemoteLink> link)
        : base(solicitor is { Remote.Hub: false } ? Delivery.PeerRole.SpokeLeaf : Delivery.PeerRole.HubLeaf)
    {
        _service = service;
        _logger = logger;
        _solicitor = solicitor;
        Url = url;
        Link = link(this);
        _interest = new RemoteInterest(this);
        Sent = new LeafSubjectMap(this);
    }

    /// <summary>The connection lifecycle shared with route and gateway connections.</summary>
    public Transport.RemoteLink Link { get; }
    public ulong Id => Link.Id;

    /// <summary>The remote this connection was dialled for; null for an accepted one.</summary>
    public LeafRemote? Remote => _solicitor?.Remote;
    public Uri? Url { get; }
    public bool Solicited => Remote is not null;
    public RouteOutbound Outbound => Link.Outbound;
    public LeafSubjectMap Sent { get; }
    public string RemoteIp => Link.RemoteIp;
    public int RemotePort => Link.RemotePort;
    public DateTime Start => Link.Start;

    /// <summary>The account the connection is bound to (after CONNECT on the hub, at creation on the spoke).</summary>
    public Account? Account { get; private set; }
    public string RemoteServerName { get; private set; } = "";
    public override string RemoteCluster => _remoteCluster;
    public override byte[] RemoteClusterUtf8 => _remoteClusterUtf8;
    public string? ClosedReason => Link.ClosedReason;
    public bool IsRegistered { get; private set; }

    /// <summary>Subjects this connection may not carry out (publish deny) and may not ask for (subscribe deny):
    /// the remote's deny lists, the hub's <c>deny_pub</c> and Go's JetStream denies.</summary>
    public LeafPermissions Permissions { get; } = new();

    public TimeSpan Rtt => Link.Rtt;
    public Task Closed => Link.Closed;
    public bool IsClosed => Link.IsClosed;
    public int SubscriptionCount => _interest.Count;
    internal RemoteInterest Interest => _interest;

    public override string ToString() => Link.ToString();

    public Task RunAsync() => Link.RunAsync(() =>
    {
        var now = Environment.TickCount64;
        if (Remote is not null)
        {
            Account = _service.Server.FindAccount(string.IsNullOrEmpty(Remote.LocalAccount) ? Account.GlobalAccountName : Remote.LocalAccount);
            _logger.LogInformation("{Leaf} - Leafnode connection created for account: {Account} ", this, Account?.Name);
            _deadline = now + (long)InfoWait.TotalMilliseconds;
        }
        else
        {
            _logger.LogInformation("{Leaf} - Leafnode connection created ", this);
            _nonce = Auth.NonceGenerator.Create();
            Outbound.Append(_service.BuildInfo(_nonce, Id, connectInfo: false, remoteAccount: null));
            var authTimeout = (long)_service.Options.AuthTimeout.TotalMilliseconds;
            // Go's createLeafNode: INFO in plain text, then the server side of the handshake; the auth timer starts after it.
            if (!Link.IsWebSocket && _service.Options.TlsContext is { } tls)
            {
                Link.UpgradeBeforeNextRead(new Transport.PeerTls(tls, Solicit: false, "", RequireCertificate: tls.Verify, tls.Options.PinnedCerts),
                    () => _deadline = Environment.TickCount64 + authTimeout);
            }
            else
            {
                _deadline = now + authTimeout;
            }
        }
    });

    bool Transport.IRemoteLinkOwner.Admit(ReadOnlySpan<byte> op)
    {
        if (!_connectReceived && !Solicited && !Is(op, "CONNECT"u8))
        {
            // Go's expectConnect: a leaf must bind its account before anything else.
            AuthViolation();
            return false;
        }
        return true;
    }

    int Transport.IRemoteLinkOwner.OnCommand(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args)
    {
        if (Is(op, "LMSG"u8) || Is(op, "HMSG"u8) || Is(op, "RMSG"u8))
        {
            return HandleMessage(span, lf, rest, Is(op, "HMSG"u8), args);
        }
        HandleControl(op, rest, args);
        return lf + 1;
    }

    private void HandleControl(ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args)
    {
        if (Is(op, "LS+"u8) || Is(op, "RS+"u8))

        {
            HandleSub(rest, args);
        }
        else if (Is(op, "LS-"u8) || Is(op, "RS-"u8))
        {
            HandleUnsub(rest, args);
        }
        else if (Is(op, "INFO"u8))
        {
            HandleInfo(rest);
        }
        else if (Is(op, "CONNECT"u8))
        {
            HandleConnect(rest);
        }
        else if (Is(op, "-ERR"u8))
        {
            HandleError(rest);
        }
        else if (Is(op, "+OK"u8) || op.IsEmpty)
        {
        }
        else
        {
            UnknownOperation(op);
        }
    }

    /// <summary>Go's parseErr for a verb it does not know: -ERR, then its "parser ERROR" line with a snippet of the input.</summary>
    private void UnknownOperation(ReadOnlySpan<byte> op)
    {
        SendError("Unknown Protocol Operation");
        // Go's protoSnippet: up to 32 bytes from the verb, never the buffer's last byte.
        var lineStart = Link.LineStart;
        var stop = Math.Min(lineStart + 32, Link.BufferEnd - 1);
        var snippet = Encoding.UTF8.GetString(Link.Buffer, lineStart, Math.Max(0, stop - lineStart));
        _logger.LogError("{Leaf} - Leafnode parser ERROR, state=0, i={Offset}: proto='{Snippet}...'", this, lineStart, GoQuote(snippet));
        Close("Protocol Violation");
    }

    private static string GoQuote(string text)
    {
        var sb = new StringBuilder("\"");
        foreach (var c in text)
        {
            sb.Append(c switch
            {
                '\r' => "\\r",
                '\n' => "\\n",
                '\t' => "\\t",
                '"' => "\\\"",
                '\\' => "\\\\",
                _ => c.ToString(),
            });
        }
        return sb.Append('"').ToString();
    }

    /// <summary>LMSG/HMSG: returns the bytes consumed, or 0 when the payload has not fully arrived.</summary>
    private int HandleMessage(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> rest, bool headers, Span<Range> args)
    {
        var count = Split(rest, args);
        var sizeArgs = headers ? 2 : 1;
        if (count < 1 + sizeArgs || count > args.Length || !TryParseSize(rest[args[count - 1]], out var size))
        {
            ProtocolError("Processing Leaf Message Args");
            return span.Length;
        }
        var headerSize = -1;
        if (headers && (!TryParseSize(rest[args[count - 2]], out headerSize) || headerSize > size))
        {
            ProtocolError("Processing Leaf Message Args");
            return span.Length;
        }
        var needed = lf + 1 + size + 2;
        if (span.Length < needed)
        {
            return 0;
        }
        ReadOnlySpan<byte> reply = default;
        ReadOnlySpan<byte> queues = default;
        var middle = count - 1 - sizeArgs;
        if (middle == 1)
        {
            reply = rest[args[1]];
        }
        else if (middle > 1)
        {
            var indicator = rest[args[1]];
            int firstQueue;
            if (indicator is [(byte)'+'])
            {
                reply = rest[args[2]];
                firstQueue = 3;
            }
            else if (indicator is [(byte)'|'])
            {
                firstQueue = 2;
            }
            else
            {
                ProtocolError("Bad or Missing Reply Indicator");
                return span.Length;
            }
            var lastQueue = count - 1 - sizeArgs;
            if (firstQueue <= lastQueue)
            {
                queues = rest[args[firstQueue].Start.Value..args[lastQueue].End.Value];
            }
        }
        var message = span.Slice(lf + 1, size + 2);
        Link.InMsgs++;
        Link.InBytes += size;
        if (Account is { } account && IsRegistered)
        {
            // Go's parser applies the account's mappings to a leaf's messages as to a client's (not to a route's).
            var subject = rest[args[0]];
            var mapped = false;
            if (account.Mappings is { } mappings && mappings.TryMap(subject, ref _mappedSubject, out var mappedLength))
            {
                subject = _mappedSubject.AsSpan(0, mappedLength);
                mapped = true;
            }
            Link.Proxy.Router.RouteFromPeer(account, subject, reply, queues, headerSize, message, this, mapped: mapped);
        }
        return needed;
    }

    private void HandleSub(ReadOnlySpan<byte> rest, Span<Range> args)
    {
        var count = Split(rest, args);
        if (count is not (1 or 3))
        {
            // Go's processLeafSub error: logged, the connection closed, no -ERR.
            _logger.LogError("{Leaf} - processLeafSub Parse Error: '{Args}'", this, Encoding.UTF8.GetString(rest));
            Close("Protocol Violation");
            return;
        }
        if (Account is not { } account)
        {
            return;
        }
        var subject = rest[args[0]];
        if (_service.IsOwnLoopSubject(account, subject))
        {
            LoopDetected(sendError: true);
            return;
        }
        var weight = 1;
        if (count == 3 && !TryParseSize(rest[args[2]], out weight))
        {
            weight = 1;
        }
        _interest.Add(account, subject, count == 3 ? rest[args[1]] : default, weight, _remoteCluster.Length > 0 ? _remoteCluster : null);
    }

    private void HandleUnsub(ReadOnlySpan<byte> rest, Span<Range> args)
    {
        var count = Split(rest, args);
        if (count is not (1 or 2))
        {
            ProtocolError("Processing Leaf Unsub");
            return;
        }
        if (Account is { } account)
        {
            _interest.Remove(account, rest[args[0]], count == 2 ? rest[args[1]] : default);
        }
    }

    /// <summary>An -ERR from the peer: logged; a loop or a cluster-name clash closes and delays the next dial (Go's 30 s).</summary>
    private void HandleError(ReadOnlySpan<byte> rest)
    {
        var text = Encoding.UTF8.GetString(rest);
        if (text.Contains("Loop detected", StringComparison.Ordinal))
        {
            LoopDetected(sendError: false);
            return;
        }
        _logger.LogError("{Leaf} - Leafnode Error {Error}", this, text);
        if (text.Contains("remote leafnode has same cluster name", StringComparison.Ordinal) ||
            text.Contains("Permissions Violation for Subscription", StringComparison.Ordinal))
        {
            _solicitor?.DelayNextConnect(LeafSolicitor.ErrorDelay);
            Close("Protocol Violation");
        }
    }

    private void LoopDetected(bool sendError)
    {
        var name = Account?.Name ?? "";
        var delay = Solicited ? LeafSolicitor.ErrorDelay : TimeSpan.Zero;
        _solicitor?.DelayNextConnect(LeafSolicitor.ErrorDelay);
        var text = $"Loop detected for leafnode account=\"{name}\". Delaying attempt to reconnect for {GoDuration.Format(delay)}";
        if (sendError)
        {
            SendError(text);
        }
        _logger.LogError("{Leaf} - {Error}", this, text);
        Close("Protocol Violation");
    }

    private void HandleConnect(ReadOnlySpan<byte> json)
    {
        if (Solicited || _connectReceived)
        {
            return;
        }
        var connect = PeerConnect.Parse(json);
        if (connect is null)
        {
            ProtocolError("Processing Leaf Connect");
            return;
        }
        // Go authenticates first (processConnect), then looks at what connected (processLeafNodeConnect).
        var accountName = _service.Authenticate(connect, _nonce, RemoteIp, Link.IsWebSocket, this);
        var account = accountName is null ? null : _service.Server.FindAccount(accountName);
        if (account is null)
        {
            AuthViolation(connect.User);
            return;
        }
        Account = account;
        if (connect.Lang is not null)
        {
            SendErrorAndLog("attempted to connect to leaf node port");
            Close("Incorrect Port");
            return;
        }
        var cluster = _service.ClusterName;
        if (cluster.Length > 0 && connect.Cluster == cluster)
        {
            SendErrorAndLog("remote leafnode has same cluster name");
            Close("Cluster Names Identical");
            return;
        }
        if (connect.Gateway is not null)
        {
            var text = $"Rejecting connection from gateway \"{connect.Gateway}\" on the leafnode port";
            _logger.LogError("{Leaf} - {Error}", this, text);
            SendError(text);
            Close("Wrong Gateway");
            return;
        }
        _connectReceived = true;
        _deadline = 0;
        _peerHeaders = connect.Headers && !_service.Server.Options.NoHeaderSupport;
        RemoteServerName = connect.Name;
        _remoteCluster = connect.Cluster;
        _remoteClusterUtf8 = Encoding.UTF8.GetBytes(connect.Cluster);
        if (connect.Hub)
        {
            Role = Delivery.PeerRole.SpokeLeaf;
        }
        else if (_remoteClusterUtf8.Length > 0)
        {
            Link.Proxy.LeafOrigin = _remoteClusterUtf8;
        }
        if (connect.DenyPub is { Count: > 0 } denyPub)
        {
            Permissions.AddPublishDeny(denyPub);
        }
        if (!account.TryAddLeaf())
        {
            SendErrorAndLog("maximum account active connections exceeded");
            Close("Maximum Account Connections Exceeded");
            return;
        }
        Account = account;
        _service.EvictDuplicate(this);
        Outbound.Append(_service.BuildInfo(null, Id, connectInfo: true, remoteAccount: account.Name));
        Register();
    }

    private void HandleInfo(ReadOnlySpan<byte> json)
    {
        var info = ServerInfo.Parse(json);
        if (info is null)
        {
            ProtocolError("Processing Leaf Info");
            return;
        }
        if (!Solicited)
        {
            return;
        }
        var first = !_infoReceived;
        if (first)
        {
            _infoReceived = true;
            if (info.ClientId == 0 || info.LeafNodeUrls is null)
            {
                _logger.LogError("{Leaf} - attempted to connect to wrong port", this);
                Close("Incorrect Port");
                return;
            }
            _nonce = info.Nonce;
            // The INFO wait is over; the CONNECT's starts once it is sent (after TLS, if any).
            _deadline = 0;
            if (info.TlsRequired)
            {
                _solicitor!.NoteHubRequiresTls();
            }
            _peerHeaders = info.Headers && !_service.Server.Options.NoHeaderSupport;
            RemoteServerName = string.IsNullOrEmpty(info.ServerName) ? info.ServerId : info.ServerName;
            _remoteCluster = info.Cluster ?? "";
            _remoteClusterUtf8 = Encoding.UTF8.GetBytes(_remoteCluster);
        }
        // Go's updateLeafNodeURLs: a websocket remote learns the hub's websocket URLs.
        if ((Remote!.IsWebSocket ? info.WsConnectUrls : info.LeafNodeUrls) is { Count: > 0 } urls)
        {
            _solicitor!.LearnUrls(urls);
        }
        if (first)
        {
            var infoOnConnect = info.InfoOnConnect;
            // Go's leafNodeResumeConnectProcess: over TCP the client side of the handshake now (a websocket did its TLS in the upgrade).
            if (!Link.IsWebSocket && _solicitor!.TlsFor(Url!) is { } tls)
            {
                Link.UpgradeBeforeNextRead(tls, () => SendConnect(infoOnConnect, tlsRequired: true));
            }
            else
            {
                SendConnect(infoOnConnect, tlsRequired: false);
            }
            return;
        }
        if (info.ConnectInfo)
        {
            FinishSolicited();
        }
    }

    private void SendConnect(bool infoOnConnect, bool tlsRequired)
    {
        if (_service.BuildConnect(_solicitor!, Url, _nonce, tlsRequired, out var error) is not { } connect)
        {
            _logger.LogError("{Leaf} - {Error}", this, error);
            Close("Write Error");
            return;
        }
        Outbound.Append(connect);
        _logger.LogDebug("{Leaf} - Remote leafnode connect msg sent", this);
        _deadline = Environment.TickCount64 + (long)ConnectProcessTimeout.TotalMilliseconds;
        if (!infoOnConnect)
        {
            FinishSolicited();
        }
    }

    /// <summary>The hub's second INFO arrived (Go's leafNodeFinishConnectProcess): count in the account, register, send interest.</summary>
    private void FinishSolicited()
    {
        if (IsRegistered || _connectReceived || Account is not { } account)
        {
            return;
        }
        _connectReceived = true;
        _deadline = 0;
        if (!account.TryAddLeaf())
        {
            SendErrorAndLog("maximum account active connections exceeded");
            Close("Maximum Account Connections Exceeded");
            return;
        }
        Permissions.AddPublishDeny(Remote!.DenyExports);
        Permissions.AddSubscribeDeny(Remote.DenyImports);
        Register();
    }

    private void Register()
    {
        var account = Account!;
        if (!account.IsSystem)
        {
            // Go's "JetStream Not Extended" deny: without a shared domain the JetStream API stays on its own side.
            _logger.LogInformation("{Leaf} - JetStream Not Extended, adding deny [$JS.API.> $KV.> $OBJ.>] for account \"{Account}\"", this, account.Name);
            Permissions.AddPublishDeny(LeafPermissions.JetStreamDenies);
            Permissions.AddSubscribeDeny(LeafPermissions.JetStreamDenies);
            var jetStream = _service.Server.Options.JetStream;
            if (jetStream.Enabled && !string.IsNullOrEmpty(jetStream.Domain))
            {
                // Go's blockMappingOutgoing: requests for our own domain are served here, never sent across.
                var own = $"$JS.{jetStream.Domain}.API.>";
                Permissions.AddPublishDeny([own]);
                _logger.LogInformation("{Leaf} - Adding deny \"{Subject}\" for outgoing messages to account \"{Account}\"", this, own, account.Name);
            }
        }
        var first = Math.Min(1000, (long)_service.Server.Options.PingInterval.TotalMilliseconds);
        Link.SchedulePing(Environment.TickCount64 + first);
        IsRegistered = true;
        _service.OnRegistered(this);
        if (IsClosed)
        {
            _service.OnClosed(this);
        }
    }

    /// <summary>A local publish matched the peer's interest: one LMSG/HMSG unless the subject may not leave here.</summary>
    public override void SendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, Delivery.MessageOrigin publisher)
    {
        if (!Permissions.MayPublish(subject))
        {
            return;
        }
        Link.SendMessage(default, subject, reply, queues, headerSize, message, _peerHeaders, publisher);
    }

    /// <summary>The service's periodic check: handshake deadlines, write deadline, PINGs and stale detection.</summary>
    public void OnTick(long now)
    {
        if (IsClosed)
        {
            return;
        }
        if (_deadline != 0 && now >= _deadline && !IsRegistered)
        {
            if (!Solicited)
            {
                _logger.LogError("{Leaf} - Authentication Timeout", this);
                SendError("Authentication Timeout");
                Close("Authentication Timeout");
            }
            else if (!_infoReceived)
            {
                _logger.LogDebug("{Leaf} - No INFO from the remote leafnode", this);
                Close("Read Error");
            }
            else
            {
                _logger.LogDebug("{Leaf} - Stale Leaf Node Connection - Closing", this);
                SendError("Stale Leaf Node Connection - Closing");
                Close("Stale Connection");
            }
            return;
        }
        // PINGs start at registration (SchedulePing); the write deadline applies from the start.
        Link.OnTick(now);
    }

    /// <summary>Go's authViolation: the line names the CONNECT's user (or nkey) only when the server has client users (or
    /// nkeys) and is not in operator mode; the leaf block's own users never count.</summary>
    private void AuthViolation(string? user = null)
    {
        var options = _service.Server.Options;
        if (options.Operator.Enabled)
        {
            _logger.LogError("{Leaf} - authentication error", this);
        }
        else if (options.Nkeys is { Count: > 0 })
        {
            _logger.LogError("{Leaf} - authentication error - Nkey \"\"", this);
        }
        else if (options.Users is { Count: > 0 })
        {
            _logger.LogError("{Leaf} - authentication error - User \"{User}\"", this, user ?? "");
        }
        else
        {
            _logger.LogError("{Leaf} - authentication error", this);
        }
        SendError("Authorization Violation");
        Close("Authentication Failure");
    }

    public void ProtocolError(string text)
    {
        _logger.LogError("{Leaf} - Leafnode Error {Error}", this, text);
        SendError(text);
        Close("Protocol Violation");
    }

    private void SendErrorAndLog(string text)
    {
        _logger.LogError("{Leaf} - {Error}", this, text);
        SendError(text);
    }

    private void SendError(string text) => Link.SendError(text);

    public void Close(string reason, bool flush = true) => Link.Close(reason, flush);

    /// <summary>The connection ended: the peer's interest leaves the account, the service forgets it.</summary>
    void Transport.IRemoteLinkOwner.OnClosed(string reason)
    {
        _logger.LogInformation("{Leaf} - Leafnode connection closed: {Reason} account: {Account}", this, reason, Account?.Name ?? "");
        _interest.RemoveAll();
        if (IsRegistered)
        {
            Account?.RemoveLeaf();
        }
        _service.OnClosed(this);
    }
}
