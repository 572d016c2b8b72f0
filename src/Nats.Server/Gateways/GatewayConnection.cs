using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Protocol;
using Nats.Server.Routes;
using static Nats.Server.Routes.PeerTokens;

namespace Nats.Server.Gateways;

/// <summary>
/// One gateway connection (Go's GATEWAY client). Outbound (we dialled a remote cluster): it waits for the acceptor's
/// INFO, answers CONNECT then our INFO, learns interest (RS+/RS-, the interest-only commands) into
/// <see cref="RemoteInterest"/> and carries our cluster's messages out as RMSG/HMSG. Inbound (accepted): INFO first,
/// CONNECT required under the auth timer, then it receives messages and sends our interest
/// (<see cref="GatewayAccountInterest"/>). Messages flow outbound→inbound only, interest inbound→outbound.
/// </summary>
internal sealed class GatewayConnection : Delivery.RemotePeer, Transport.IRemoteLinkOwner, Transport.ILiveLink
{
    // Go's gwMaxPingInterval: gateways ping regardless of traffic, at most this far apart.
    private static readonly TimeSpan MaxPingInterval = TimeSpan.FromSeconds(15);

    private readonly GatewayService _service;
    private readonly ILogger _logger;
    private readonly RemoteInterest _interest;
    private readonly GatewayRemoteState? _remote;
    private bool _connectReceived;
    private bool _infoReceived;
    private bool _registered;
    private bool _peerHeaders;
    private long _authDeadline;
    private Account? _lastAccount;
    private readonly List<string> _interestOnlyAccounts = [];

    public GatewayConnection(GatewayService service, Socket socket, ulong id, GatewayRemoteState? remote, Uri? url, ILogger logger)
        : base(Delivery.PeerRole.Gateway)
    {
        _service = service;
        _logger = logger;
        _remote = remote;
        Url = url;
        Name = remote?.Name ?? "";
        var tls = remote is null ? service.Options.TlsContext : service.TlsFor(remote.Name);
        Link = new Transport.RemoteLink(this, service.Server, socket, id, "gateway", "gid", logger,
            tls is null ? null : new Transport.PeerTls(tls, remote is not null, url?.IdnHost ?? "", RequireCertificate: true,
                service.Options.TlsContext?.Options.PinnedCerts))
        {
            PingCap = MaxPingInterval,
        };
        _interest = new RemoteInterest(this);
    }

    public Transport.RemoteLink Link { get; }
    public ulong Id => Link.Id;
    public bool IsOutbound => _remote is not null;
    public GatewayRemoteState? Remote => _remote;
    public Uri? Url { get; }

    /// <summary>The remote gateway (cluster) name: configured for an outbound, from CONNECT for an inbound.</summary>
    public string Name { get; private set; }
    public string RemoteId { get; private set; } = "";
    public string RemoteServerName { get; private set; } = "";
    public bool IsRegistered => _registered;

    /// <summary>The accounts the remote switched to interest-only on this outbound (gateway_cmd 2), for /gatewayz.</summary>
    public List<string> InterestOnlyAccounts
    {
        get
        {
            lock (_interestOnlyAccounts)
            {
                return [.. _interestOnlyAccounts];
            }
        }
    }

    /// <summary>Both sides carry headers (HMSG) rather than stripping them.</summary>
    public bool PeerHeaders => _peerHeaders;
    public int SubscriptionCount => _interest.Count;
    internal RemoteInterest Interest => _interest;

    public override string ToString() => Link.ToString();

    public Task RunAsync()
    {
        if (IsOutbound)
        {
            _logger.LogInformation("{Gateway} - Creating outbound gateway connection to \"{Name}\"", this, Name);
        }
        else
        {
            _logger.LogInformation("{Gateway} - Processing inbound gateway connection", this);
        }
        return Link.RunAsync(() =>
        {
            if (!IsOutbound)
            {
                Link.Outbound.Append(_service.RenderInfo());
                _authDeadline = Environment.TickCount64 + (long)_service.Options.AuthTimeout.TotalMilliseconds;
            }
        });
    }

    bool Transport.IRemoteLinkOwner.Admit(ReadOnlySpan<byte> op)
    {
        if (!IsOutbound && !_connectReceived && !Is(op, "CONNECT"u8))
        {
            // Go's expectConnect: an accepted gateway says CONNECT before anything else.
            _logger.LogError("{Gateway} - authentication error", this);
            Link.SendError("Authorization Violation");
            Close("Authentication Failure");
            return false;
        }
        return true;
    }

    int Transport.IRemoteLinkOwner.OnCommand(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args)
    {
        if (Is(op, "RMSG"u8) || Is(op, "HMSG"u8))
        {
            return HandleMessage(span, lf, rest, Is(op, "HMSG"u8), args);
        }
        if (Is(op, "RS+"u8))
        {
            HandleRemoteSub(rest, args, add: true);
        }
        else if (Is(op, "RS-"u8))
        {
            HandleRemoteSub(rest, args, add: false);
        }
        else if (Is(op, "A+"u8) || Is(op, "A-"u8))
        {
            // Optimistic-mode account markers; an interest-only peer (every 2.9 server) has nothing to clear.
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
            _logger.LogError("{Gateway} - Gateway Error {Error}", this, Encoding.UTF8.GetString(rest));
            Close("Parse Error");
        }
        else if (!Is(op, "+OK"u8) && !op.IsEmpty)
        {
            ProtocolError("Unknown Protocol Operation");
        }
        return lf + 1;
    }

    private int HandleMessage(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> rest, bool headers, Span<Range> args)
    {
        if (ParseRoutedArgs(rest, args, headers, out var size, out var headerSize, out var reply, out var queues) is { } error)
        {
            ProtocolError(error);
            return span.Length;
        }
        var needed = lf + 1 + size + 2;
        if (span.Length < needed)
        {
            return 0;
        }
        Link.InMsgs++;
        Link.InBytes += size;
        if (_registered && FindAccount(rest[args[0]]) is { } account)
        {
            _service.Receive(this, account, rest[args[1]], rest[reply], rest[queues], headerSize, span.Slice(lf + 1, size + 2));
        }
        return needed;
    }

    private void HandleRemoteSub(ReadOnlySpan<byte> rest, Span<Range> args, bool add)
    {
        if (!IsOutbound)
        {
            _logger.LogError("{Gateway} - Received {Op} from gateway on inbound connection", this, add ? "RS+" : "RS-");
            Close("Protocol Violation");
            return;
        }
        var count = Split(rest, args);
        if (add ? count is not (2 or 4) : count is not (2 or 3))
        {
            ProtocolError(add ? "processGatewaySubjectSub Parse Error" : "processGatewaySubjectUnsub Parse Error");
            return;
        }
        if (FindAccount(rest[args[0]]) is not { } account)
        {
            return;
        }
        var queue = count >= 3 ? rest[args[2]] : default;
        if (add)
        {
            // Go keeps the weight on gateways at 1 whatever was sent.
            _interest.Add(account, rest[args[1]], queue, 1);
        }
        else
        {
            _interest.Remove(account, rest[args[1]], queue);
        }
    }

    private Account? FindAccount(ReadOnlySpan<byte> name)
    {
        if (_lastAccount is { } last && last.NameUtf8.AsSpan().SequenceEqual(name))
        {
            return last;
        }
        var account = _service.Server.FindAccount(Encoding.UTF8.GetString(name));
        if (account is not null)
        {
            _lastAccount = account;
        }
        return account;
    }

    private void HandleConnect(ReadOnlySpan<byte> json)
    {
        if (IsOutbound || _connectReceived)
        {
            return;
        }
        var connect = PeerConnect.Parse(json);
        if (connect is null)
        {
            ProtocolError("Processing Gateway Connect");
            return;
        }
        if (string.IsNullOrEmpty(connect.Gateway))
        {
            SendErrorAndLog("attempted to connect to gateway port");
            Close("Incorrect Port");
            // Go logs the refusal once more, as the error processConnect returns.
            _logger.LogError("{Gateway} - attempted to connect to gateway port", this);
            return;
        }
        if (!_service.Authenticate(connect.User, connect.Pass))
        {
            _logger.LogError("{Gateway} - authentication error", this);
            Link.SendError("Authorization Violation");
            Close("Authentication Failure");
            return;
        }
        if (_service.Options.RejectUnknown && !_service.IsConfigured(connect.Gateway))
        {
            _logger.LogError("{Gateway} - Rejecting connection from gateway \"{Name}\"", this, connect.Gateway);
            Link.SendError($"Connection to gateway \"{_service.Name}\" rejected");
            Close("Wrong Gateway");
            return;
        }
        _connectReceived = true;
        _authDeadline = 0;
        Name = connect.Gateway;
        RemoteId = connect.Name;
        SchedulePing();
    }

    private void HandleInfo(ReadOnlySpan<byte> json)
    {
        var info = ServerInfo.Parse(json);
        if (info is null)
        {
            ProtocolError("Processing Gateway Info");
            return;
        }
        var first = !_infoReceived;
        _infoReceived = true;
        if (IsOutbound)
        {
            HandleOutboundInfo(info, first);
        }
        else if (first)
        {
            RemoteServerName = info.ServerName;
            if (_service.IsDuplicateServerName(info.ServerName))
            {
                _logger.LogError("{Gateway} - Remote server has a duplicate name: \"{Name}\"", this, info.ServerName);
                Close("Duplicate Server Name");
                return;
            }
            _registered = true;
            _logger.LogInformation("{Gateway} - Inbound gateway connection from \"{Name}\" ({Id}) registered", this, info.Gateway, info.ServerId);
            _service.OnInboundRegistered(this, info);
        }
    }

    private void HandleOutboundInfo(ServerInfo info, bool first)
    {
        if (string.IsNullOrEmpty(info.Gateway))
        {
            SendErrorAndLog($"Attempt to connect to gateway \"{Name}\" using wrong port");
            Close("Incorrect Port");
            return;
        }
        if (info.Gateway != Name)
        {
            if (!first && info.GatewayCmd == GatewayCommand.Gossip)
            {
                _service.OnGossip(info.Gateway, info.GatewayUrls);
                return;
            }
            _logger.LogError("{Gateway} - Failing connection to gateway \"{Name}\", remote gateway name is \"{Remote}\"", this, Name, info.Gateway);
            Link.SendError($"Connection from \"{_service.Name}\" rejected, wanted to connect to \"{Name}\", this is \"{info.Gateway}\"");
            Close("Wrong Gateway");
            return;
        }
        if (first && _service.IsDuplicateServerName(info.ServerName))
        {
            _logger.LogError("{Gateway} - Remote server has a duplicate name: \"{Name}\"", this, info.ServerName);
            Close("Duplicate Server Name");
            return;
        }
        if (info.GatewayUrls is { Count: > 0 } urls)
        {
            _remote!.AddUrls(urls);
        }
        if (first)
        {
            RemoteId = info.ServerId;
            RemoteServerName = info.ServerName;
            _peerHeaders = info.Headers && !_service.Server.Options.NoHeaderSupport;
            Link.Outbound.Append(_service.RenderConnect(Url, tlsRequired: Link.Tls is not null));
            Link.Outbound.Append(_service.RenderInfo());
            if (!_service.RegisterOutbound(this))
            {
                Close("Wrong Gateway");
                return;
            }
            _registered = true;
            _logger.LogInformation("{Gateway} - Outbound gateway connection to \"{Name}\" ({Id}) registered", this, Name, info.ServerId);
            SchedulePing();
        }
        else if (info.GatewayCmd is GatewayCommand.AllSubsStart or GatewayCommand.AllSubsComplete)
        {
            var account = info.GatewayCmdPayload is { Length: > 0 } payload ? Encoding.UTF8.GetString(payload) : null;
            if (account is null)
            {
                var which = info.GatewayCmd == GatewayCommand.AllSubsStart ? "start" : "complete";
                SendErrorAndLog($"Account absent from receive-all-subscriptions-{which} command");
                Close("Protocol Violation");
            }
            else if (info.GatewayCmd == GatewayCommand.AllSubsStart)
            {
                lock (_interestOnlyAccounts)
                {
                    if (!_interestOnlyAccounts.Contains(account))
                    {
                        _interestOnlyAccounts.Add(account);
                    }
                }
            }
            // Every interest-only peer's RS+ already goes into the index; the commands only bracket them.
            return;
        }
        else if (info.GatewayCmd != 0)
        {
            _logger.LogWarning("Received unknown command {Cmd} from gateway \"{Name}\"", info.GatewayCmd, Name);
            return;
        }
        _service.ForwardToCluster(info);
    }

    private void SchedulePing()
    {
        var first = Math.Min(1000, (long)_service.Server.Options.PingInterval.TotalMilliseconds);
        Link.SchedulePing(Environment.TickCount64 + first);
    }

    /// <summary>
    /// A local publish matched the remote cluster's interest: one RMSG/HMSG. A reply our cluster subscribed to in the
    /// last 2 s goes as <c>_GR_.&lt;cluster&gt;.&lt;server&gt;.reply</c>, so the answer comes straight back (Go's reply mapping).
    /// </summary>
    public override void SendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, Delivery.MessageOrigin publisher)
    {
        if (!reply.IsEmpty && _service.ShouldMapReply(account, reply))
        {
            var prefix = _service.ReplyPrefix;
            Span<byte> mapped = stackalloc byte[Math.Min(prefix.Length + reply.Length, 1024)];
            if (prefix.Length + reply.Length <= mapped.Length)
            {
                prefix.CopyTo(mapped);
                reply.CopyTo(mapped[prefix.Length..]);
                Link.SendMessage(account, subject, mapped, queues, headerSize, message, _peerHeaders, publisher);
                return;
            }
        }
        Link.SendMessage(account, subject, reply, queues, headerSize, message, _peerHeaders, publisher);
    }

    public void OnTick(long now)
    {
        if (Link.IsClosed)
        {
            return;
        }
        if (_authDeadline != 0 && now >= _authDeadline && !_connectReceived)
        {
            _logger.LogError("{Gateway} - Authentication Timeout", this);
            Link.SendError("Authentication Timeout");
            Close("Authentication Timeout");
            return;
        }
        Link.OnTick(now);
    }

    public void ProtocolError(string text)
    {
        _logger.LogError("{Gateway} - Gateway Error {Error}", this, text);
        Link.SendError(text);
        Close("Protocol Violation");
    }

    private void SendErrorAndLog(string text)
    {
        _logger.LogError("{Gateway} - {Error}", this, text);
        Link.SendError(text);
    }

    public void Close(string reason, bool flush = true) => Link.Close(reason, flush);

    void Transport.IRemoteLinkOwner.OnClosed(string reason)
    {
        _logger.LogInformation("{Gateway} - Gateway connection closed: {Reason}", this, reason);
        _interest.RemoveAll();
        _service.OnClosed(this);
    }
}
