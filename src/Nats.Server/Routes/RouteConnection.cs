using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Protocol;
using static Nats.Server.Routes.PeerTokens;

namespace Nats.Server.Routes;

/// <summary>
/// One route to a peer server (Go's ROUTER client): the handshake (INFO/CONNECT), the read loop and its
/// parser for INFO, CONNECT, PING/PONG, RS+/RS-, RMSG/HMSG, -ERR and +OK, and the outbound side. What
/// the peer is interested in lives in <see cref="RemoteInterest"/> as subscriptions whose matches the
/// router sends back here as RMSG (<see cref="SendMessage"/>); what the peer sends is delivered to
/// local subscribers only, through the route's own <see cref="Delivery.MessageOrigin"/> (never to another route).
/// </summary>
internal sealed class RouteConnection : Delivery.RemotePeer, Transport.IRemoteLinkOwner, Transport.ILiveLink
{
    private readonly ClusterService _cluster;
    private readonly ILogger _logger;
    private readonly RemoteInterest _interest;
    private bool _connectReceived;
    private bool _registered;
    private bool _peerHeaders;
    private Account? _lastAccount;
    private long _authDeadline;
    private string? _nonce;

    public RouteConnection(ClusterService cluster, Socket socket, ulong id, bool solicited, Uri? url, bool configured, ILogger logger)
        : base(Delivery.PeerRole.Route)
    {
        _cluster = cluster;
        _logger = logger;
        Solicited = solicited;
        Url = url;
        IsConfigured = configured;
        Link = new Transport.RemoteLink(this, cluster.Server, socket, id, "route", "rid", logger,
            cluster.Options.TlsContext is { } tls ? new Transport.PeerTls(tls, solicited, url?.IdnHost ?? "", RequireCertificate: true, tls.Options.PinnedCerts) : null);
        _interest = new RemoteInterest(this);
        // Go's first route PING: min(ping_interval, 1 s) plus up to 20 % jitter.
        var first = Math.Min(1000, (long)cluster.Server.Options.PingInterval.TotalMilliseconds);
        Link.SchedulePing(Link.LastActivityTicks + first + Random.Shared.Next(0, (int)(first / 5) + 1));
    }

    /// <summary>The connection lifecycle shared with leaf and gateway connections.</summary>
    public Transport.RemoteLink Link { get; }
    public ulong Id => Link.Id;
    public bool Solicited { get; }
    public Uri? Url { get; }

    /// <summary>An explicit route from the configuration (as opposed to one learned by gossip or accepted).</summary>
    public bool IsConfigured { get; }
    public RouteOutbound Outbound => Link.Outbound;
    public string RemoteIp => Link.RemoteIp;
    public int RemotePort => Link.RemotePort;
    public DateTime Start => Link.Start;

    /// <summary>The peer's server id: from its CONNECT (accepting side) or its INFO.</summary>
    public string RemoteId { get; private set; } = "";
    public string RemoteName { get; private set; } = "";
    public ServerInfo? RemoteInfo { get; private set; }
    public string? ClosedReason => Link.ClosedReason;
    public TimeSpan Rtt => Link.Rtt;
    public Task Closed => Link.Closed;
    public bool IsClosed => Link.IsClosed;

    /// <summary>Completes once the peer is registered in the route table.</summary>
    public Task Registered => _registeredSignal.Task;

    private readonly TaskCompletionSource _registeredSignal = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public int SubscriptionCount => _interest.Count;

    internal RemoteInterest Interest => _interest;

    public override string ToString() => Link.ToString();

    /// <summary>Sends this side's opening (the accepting side its INFO; the soliciting side CONNECT then INFO) and runs both loops.</summary>
    public Task RunAsync()
    {
        _logger.LogInformation("{Route} - Route connection created", this);
        return Link.RunAsync(() =>
        {
            if (Solicited)
            {
                Outbound.Append(_cluster.RenderConnect(Url));
                Outbound.Append(_cluster.RenderInfo(null));
            }
            else
            {
                _nonce = Auth.NonceGenerator.Create();
                Outbound.Append(_cluster.RenderInfo(_nonce));
                if (_cluster.Options.AuthRequired)
                {
                    _authDeadline = Environment.TickCount64 + (long)_cluster.Options.AuthTimeout.TotalMilliseconds;
                }
            }
        });
    }

    bool Transport.IRemoteLinkOwner.Admit(ReadOnlySpan<byte> op)
    {
        if (!_connectReceived && !Solicited && _cluster.Options.AuthRequired && !Is(op, "CONNECT"u8))
        {
            SendError("Authorization Violation");
            Close("Authorization Violation");
            return false;
        }
        return true;
    }

    int Transport.IRemoteLinkOwner.OnCommand(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args)
    {
        var leafOrigin = Is(op, "LMSG"u8);
        if (Is(op, "RMSG"u8) || Is(op, "HMSG"u8) || leafOrigin)
        {
            // LMSG is HMSG with the origin cluster first (sent for leaf-origin messages to lnoc peers).
            return HandleMessage(span, lf, leafOrigin ? SkipToken(rest) : rest, !Is(op, "RMSG"u8), args,
                leafOrigin ? FirstToken(rest) : default);
        }
        HandleControl(op, rest, args);
        return lf + 1;
    }

    private void HandleControl(ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args)
    {
        if (Is(op, "RS+"u8))
        {
            HandleRemoteSub(rest, args);
        }
        else if (Is(op, "LS+"u8))
        {
            // LS+ carries the leaf cluster the interest came from first (Go's lnoc).
            var origin = rest.TrimStart(" \t"u8);
            var originEnd = origin.IndexOfAny((byte)' ', (byte)'\t');
            HandleRemoteSub(SkipToken(rest), args, originEnd < 0 ? null : Encoding.UTF8.GetString(origin[..originEnd]));
        }
        else if (Is(op, "RS-"u8) || Is(op, "LS-"u8))
        {
            HandleRemoteUnsub(rest, args);
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
            _logger.LogError("{Route} - Router Error {Error}", this, Encoding.UTF8.GetString(rest));
            Close("Parse Error");
        }
        else if (Is(op, "+OK"u8) || op.IsEmpty)
        {
        }
        else
        {
            ProtocolError("Unknown Protocol Operation");
        }
    }

    /// <summary>RMSG/HMSG: returns the bytes consumed, or 0 when the payload has not fully arrived.</summary>
    private int HandleMessage(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> rest, bool headers, Span<Range> args,
        ReadOnlySpan<byte> origin)
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
        var message = span.Slice(lf + 1, size + 2);
        Link.InMsgs++;
        Link.InBytes += size;
        var account = FindAccount(rest[args[0]]);
        if (account is not null)
        {
            var subject = rest[args[1]];
            // A reply a gateway sent to its origin server through this route (Go's handleGatewayReply).
            if (_cluster.Server.Gateways is { } gateways && gateways.TryStripRoutedReply(subject, out var bare))
            {
                subject = bare;
            }
            Link.Proxy.Router.RouteFromPeer(account, subject, rest[reply], rest[queues], headerSize, message, this, origin);
        }
        return needed;
    }

    private void HandleRemoteSub(ReadOnlySpan<byte> rest, Span<Range> args, string? origin = null)
    {
        var count = Split(rest, args);
        if (count is not (2 or 3 or 4))
        {
            ProtocolError("Processing Remote Sub");
            return;
        }
        var account = FindAccount(rest[args[0]]);
        if (account is null)
        {
            _logger.LogDebug("{Route} - Unknown account {Account} for subject {Subject}", this, Encoding.UTF8.GetString(rest[args[0]]),
                Encoding.UTF8.GetString(rest[args[1]]));
            return;
        }
        var weight = 1;
        if (count == 4 && !TryParseSize(rest[args[3]], out weight))
        {
            weight = 1;
        }
        _interest.Add(account, rest[args[1]], count >= 3 ? rest[args[2]] : default, weight, origin);
    }

    private void HandleRemoteUnsub(ReadOnlySpan<byte> rest, Span<Range> args)
    {
        var count = Split(rest, args);
        if (count is not (2 or 3 or 4))
        {
            ProtocolError("Processing Remote Unsub");
            return;
        }
        if (FindAccount(rest[args[0]]) is { } account)
        {
            _interest.Remove(account, rest[args[1]], count >= 3 ? rest[args[2]] : default);
        }
    }

    private Account? FindAccount(ReadOnlySpan<byte> name)
    {
        if (_lastAccount is { } last && last.NameUtf8.AsSpan().SequenceEqual(name))
        {
            return last;
        }
        var account = _cluster.Server.FindAccount(Encoding.UTF8.GetString(name));
        if (account is not null)
        {
            _lastAccount = account;
        }
        return account;
    }

    private void HandleConnect(ReadOnlySpan<byte> json)
    {
        var connect = PeerConnect.Parse(json);
        if (connect is null)
        {
            ProtocolError("Processing Route Connect");
            return;
        }
        if (connect.Lang is not null)
        {
            _logger.LogError("{Route} - attempted to connect to route port", this);
            SendError("attempted to connect to route port");
            Close("Incorrect Port");
            return;
        }
        if (connect.Gateway is not null)
        {
            var text = $"Rejecting connection from gateway \"{connect.Gateway}\" on the Route port";
            _logger.LogError("{Route} - {Error}", this, text);
            SendError(text);
            Close("Wrong Gateway");
            return;
        }
        if (_cluster.Options.AuthRequired && !_cluster.Authenticate(connect.User, connect.Pass))
        {
            _logger.LogError("{Route} - authentication error", this);
            SendError("Authorization Violation");
            Close("Authentication Failure");
            return;
        }
        if (!_cluster.AcceptClusterName(connect.Cluster, connect.Dynamic, this))
        {
            var text = $"Rejecting connection, cluster name \"{connect.Cluster}\" does not match \"{_cluster.ClusterName}\"";
            _logger.LogError("{Route} - {Error}", this, text);
            SendError(text);
            Close("Cluster Name Conflict");
            return;
        }
        _connectReceived = true;
        _authDeadline = 0;
        RemoteId = connect.Name;
        ConnectUser = connect.User;
        ConnectPassword = connect.Pass;
    }

    private void HandleInfo(ReadOnlySpan<byte> json)
    {
        var info = ServerInfo.Parse(json);
        if (info is null)
        {
            ProtocolError("Processing Route Info");
            return;
        }
        if (_registered && info.GatewayCmd == 1 && !string.IsNullOrEmpty(info.Gateway))
        {
            // Go's processGatewayInfoFromRoute: a cluster peer met a gateway; every server keeps its own outbound to it.
            if (_cluster.Server.Gateways is { } gateways)
            {
                gateways.OnGossip(info.Gateway, info.GatewayUrls);
            }
            else
            {
                _logger.LogError("{Route} - Received information about gateway \"{Name}\" from {Id}, but gateway is not configured", this, info.Gateway, RemoteId);
            }
            return;
        }
        if (!_registered)
        {
            HandleFirstInfo(info);
        }
        else if (info.ServerId != RemoteId)
        {
            // A peer forwarding a server it just met: dial it (an implicit route).
            _cluster.OnGossip(info);
        }
        else
        {
            var previous = RemoteInfo;
            RemoteInfo = info;
            _cluster.OnPeerInfoUpdated(this, previous, info);
        }
    }

    private void HandleFirstInfo(ServerInfo info)
    {
        if (info.ServerId == _cluster.Server.ServerId)
        {
            RemoteId = info.ServerId;
            _logger.LogDebug("{Route} - Detected route to self, ignoring {Url}", this, Url);
            _cluster.OnRouteToSelf(this);
            Close("Duplicate Route");
            return;
        }
        if (!string.IsNullOrEmpty(info.Cluster) && !_cluster.AcceptClusterName(info.Cluster, info.Dynamic, this))
        {
            Close("Cluster Name Conflict");
            return;
        }
        if (!Solicited && info.ServerName == _cluster.Server.ServerName)
        {
            _logger.LogError("{Route} - Remote server has a duplicate name: {Name}", this, info.ServerName);
            Close("Duplicate Server Name");
            return;
        }
        RemoteId = info.ServerId;
        RemoteName = info.ServerName;
        RemoteInfo = info;
        _peerHeaders = info.Headers && !_cluster.Server.Options.NoHeaderSupport;
        if (!_cluster.Table.TryRegister(this))
        {
            _logger.LogDebug("{Route} - Detected duplicate remote route {Id}", this, RemoteId);
            Close("Duplicate Route");
            return;
        }
        _registered = true;
        _cluster.OnRouteRegistered(this);
        _registeredSignal.TrySetResult();
    }

    /// <summary>A local publish matched this peer's interest: one RMSG/HMSG (see <see cref="RouteOutbound.AppendMessage"/>).</summary>
    public override void SendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, Delivery.MessageOrigin publisher)
    {
        // A message a leaf of another cluster sent goes on as LMSG with that cluster, so no hub hands it back to it.
        var origin = RemoteInfo is { Lnoc: true } ? publisher.LeafOrigin : null;
        Link.SendMessage(account, subject, reply, queues, headerSize, message, _peerHeaders, publisher, origin);
    }

    /// <summary>The cluster's periodic check: auth timeout, then the link's write deadline, PINGs and stale detection.</summary>
    public void OnTick(long now)
    {
        if (IsClosed)
        {
            return;
        }
        if (_authDeadline != 0 && now >= _authDeadline && !_connectReceived)
        {
            _logger.LogError("{Route} - Authentication Timeout", this);
            SendError("Authentication Timeout");
            Close("Authentication Timeout");
            return;
        }
        Link.OnTick(now);
    }

    public void ProtocolError(string text)
    {
        _logger.LogError("{Route} - Route Error {Error}", this, text);
        SendError(text);
        Close("Protocol Violation");
    }

    private void SendError(string text) => Link.SendError(text);

    public void Close(string reason, bool flush = true) => Link.Close(reason, flush);

    /// <summary>An accepted route's CONNECT has been admitted.</summary>
    public bool ConnectReceived => Volatile.Read(ref _connectReceived);

    /// <summary>The credentials of an accepted route's CONNECT, checked again when a reload changes the cluster's.</summary>
    public string? ConnectUser { get; private set; }

    public string? ConnectPassword { get; private set; }

    /// <summary>Go's authViolation for a route a reload no longer authorizes.</summary>
    public void CloseUnauthorized()
    {
        _logger.LogError("{Route} - authentication error", this);
        SendError("Authorization Violation");
        Close("Authentication Failure");
    }

    /// <summary>The route ended: the peer's interest leaves the indexes and the cluster forgets it.</summary>
    void Transport.IRemoteLinkOwner.OnClosed(string reason)
    {
        _logger.LogInformation("{Route} - Router connection closed: {Reason}", this, reason);
        _interest.RemoveAll();
        _cluster.OnRouteClosed(this, _registered);
    }
}
