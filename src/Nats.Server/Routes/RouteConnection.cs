using System.Buffers.Text;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Configuration;

using static Nats.Server.Routes.PeerTokens;

namespace Nats.Server.Routes;

/// <summary>
/// One route to a peer server (Go's ROUTER client): the handshake (INFO/CONNECT), the read loop and its
/// parser for INFO, CONNECT, PING/PONG, RS+/RS-, RMSG/HMSG, -ERR and +OK, and the outbound side. What
/// the peer is interested in lives in <see cref="RemoteInterest"/> as subscriptions whose matches the
/// router sends back here as RMSG (<see cref="SendMessage"/>); what the peer sends is delivered to
/// local subscribers only, through the route's own <see cref="Delivery.MessageOrigin"/> (never to another route).
/// </summary>
internal sealed class RouteConnection : Delivery.RemotePeer, IOutboundOwner, IDrainable
{
    private const int MaxArgs = 256;
    private const int MaxBuffer = 64 * 1024 * 1024;

    // Chunk memory past which a local publisher waits for the route to drain: larger than a client's
    // (every publisher shares the route), still small enough that many routes hold little.
    private const long StallThresholdCap = 4 * 1024 * 1024;

    private readonly ClusterService _cluster;
    private readonly Socket _socket;
    private readonly ILogger _logger;
    private readonly RemoteInterest _interest;
    // Publishes what the peer sends to local subscribers; never paused by a slow one.
    private readonly Delivery.MessageOrigin _proxy;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly string _remoteAddress;
    private int _closing;
    private bool _connectReceived;
    private bool _registered;
    private bool _peerHeaders;
    private Account? _lastAccount;
    private long _authDeadline;
    private long _nextPing;
    private int _pingsOut;
    private string? _nonce;

    public RouteConnection(ClusterService cluster, Socket socket, ulong id, bool solicited, Uri? url, bool configured, ILogger logger)
        : base(Delivery.PeerRole.Route)
    {
        _cluster = cluster;
        _socket = socket;
        _logger = logger;
        Id = id;
        Solicited = solicited;
        Url = url;
        IsConfigured = configured;
        Outbound = new RouteOutbound(new OutboundQueue(this, new Transport.SocketTransport(socket)));
        _interest = new RemoteInterest(this);
        // A local subscriber that is reading but behind pauses this route's reader (TCP then pushes back on
        // the peer's publishers) instead of being cut for max_pending; one that stops reading is cut after
        // the stuck bound, so the route is held up at most that long for everyone else.
        _proxy = new Delivery.MessageOrigin(cluster.Server, id, canStall: true);
        var remote = socket.RemoteEndPoint as IPEndPoint;
        // A dialled socket is dual-mode: show an IPv4 peer as Go does, not as ::ffff:a.b.c.d.
        var address = remote?.Address is { IsIPv4MappedToIPv6: true } mapped ? mapped.MapToIPv4() : remote?.Address;
        RemoteIp = address?.ToString() ?? "";
        RemotePort = remote?.Port ?? 0;
        _remoteAddress = remote is null ? "?" : $"{RemoteIp}:{RemotePort}";
        Start = DateTime.UtcNow;
        LastActivityTicks = Environment.TickCount64;
        // Go's first route PING: min(ping_interval, 1 s) plus up to 20 % jitter.
        var first = Math.Min(1000, (long)cluster.Server.Options.PingInterval.TotalMilliseconds);
        _nextPing = LastActivityTicks + first + Random.Shared.Next(0, (int)(first / 5) + 1);
    }

    public ulong Id { get; }
    public bool Solicited { get; }
    public Uri? Url { get; }

    /// <summary>An explicit route from the configuration (as opposed to one learned by gossip or accepted).</summary>
    public bool IsConfigured { get; }
    public RouteOutbound Outbound { get; }
    public string RemoteIp { get; }
    public int RemotePort { get; }
    public DateTime Start { get; }

    /// <summary>The peer's server id: from its CONNECT (accepting side) or its INFO.</summary>
    public string RemoteId { get; private set; } = "";
    public string RemoteName { get; private set; } = "";
    public RouteInfo? RemoteInfo { get; private set; }
    public string? ClosedReason { get; private set; }

    public long InMsgs;
    public long InBytes;
    public long LastActivityTicks;
    public TimeSpan Rtt { get; private set; }
    private long _pingSentTicks;

    public Task Closed => _closed.Task;
    public bool IsClosed => Volatile.Read(ref _closing) == 1;
    public int SubscriptionCount => _interest.Count;

    internal RemoteInterest Interest => _interest;

    public override string ToString() => $"{_remoteAddress} - rid:{Id}";

    /// <summary>Sends this side's opening (the accepting side its INFO; the soliciting side CONNECT then INFO) and runs both loops.</summary>
    public async Task RunAsync()
    {
        _logger.LogInformation("{Route} - Route connection created", this);
        var writer = _writer = Task.Run(Outbound.RunWriteLoopAsync);
        var now = Environment.TickCount64;
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
                _authDeadline = now + (long)_cluster.Options.AuthTimeout.TotalMilliseconds;
            }
        }
        try
        {
            await ReadLoopAsync().ConfigureAwait(false);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException)
        {
            Close("Read Error");
        }
        catch (Exception e)
        {
            _logger.LogError(e, "{Route} - Unexpected error in route read loop", this);
            Close("Read Error");
        }
        await writer.ConfigureAwait(false);
    }

    private async Task ReadLoopAsync()
    {
        var buffer = new byte[32 * 1024];
        int start = 0, end = 0;
        while (!IsClosed)
        {
            if (end == buffer.Length)
            {
                if (start > 0)
                {
                    Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                    end -= start;
                    start = 0;
                }
                else if (buffer.Length >= MaxBuffer)
                {
                    ProtocolError("Maximum Control Line Exceeded");
                    return;
                }
                else
                {
                    Array.Resize(ref buffer, buffer.Length * 2);
                }
            }
            var n = await _socket.ReceiveAsync(buffer.AsMemory(end), SocketFlags.None).ConfigureAwait(false);
            if (n == 0)
            {
                Close("Client Closed");
                return;
            }
            end += n;
            Volatile.Write(ref LastActivityTicks, Environment.TickCount64);
            start = Process(buffer, start, end);
            _proxy.FlushBatch.FlushAll();
            while (_proxy.StalledOn.MustStall && !IsClosed)
            {
                await _proxy.StalledOn.WaitAllAsync().ConfigureAwait(false);
            }
            if (start == end)
            {
                start = end = 0;
            }
            else if (start > buffer.Length / 2)
            {
                Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                end -= start;
                start = 0;
            }
        }
    }

    /// <summary>Handles every complete command in buffer[start..end]; returns where the first incomplete one starts.</summary>
    private int Process(byte[] buffer, int start, int end)
    {
        Span<Range> args = stackalloc Range[MaxArgs];
        while (start < end && !IsClosed)
        {
            var span = buffer.AsSpan(start, end - start);
            var lf = span.IndexOf((byte)'\n');
            if (lf < 0)
            {
                return start;
            }
            var line = span[..lf];
            if (!line.IsEmpty && line[^1] == (byte)'\r')
            {
                line = line[..^1];
            }
            var opEnd = line.IndexOfAny((byte)' ', (byte)'\t');
            var op = opEnd < 0 ? line : line[..opEnd];
            var rest = opEnd < 0 ? default : line[(opEnd + 1)..];
            if (!_connectReceived && !Solicited && _cluster.Options.AuthRequired && !Is(op, "CONNECT"u8))
            {
                SendError("Authorization Violation");
                Close("Authorization Violation");
                return end;
            }
            var leafOrigin = Is(op, "LMSG"u8);
            if (Is(op, "RMSG"u8) || Is(op, "HMSG"u8) || leafOrigin)
            {
                // LMSG is HMSG with the origin cluster first (sent for leaf-origin messages to lnoc peers).
                var consumed = HandleMessage(span, lf, leafOrigin ? SkipToken(rest) : rest, !Is(op, "RMSG"u8), args,
                    leafOrigin ? FirstToken(rest) : default);
                if (consumed == 0)
                {
                    return start;
                }
                start += consumed;
                continue;
            }
            start += lf + 1;
            HandleControl(op, rest, args);
        }
        return start;
    }

    private void HandleControl(ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args)
    {
        if (Is(op, "PING"u8))
        {
            Outbound.Append("PONG\r\n"u8);
        }
        else if (Is(op, "PONG"u8))
        {
            _pingsOut = 0;
            if (_pingSentTicks != 0)
            {
                Rtt = TimeSpan.FromMilliseconds(Environment.TickCount64 - _pingSentTicks);
                _pingSentTicks = 0;
            }
        }
        else if (Is(op, "RS+"u8))
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
        var count = Split(rest, args);
        var sizeArgs = headers ? 2 : 1;
        if (count < 2 + sizeArgs || count > MaxArgs)
        {
            ProtocolError("Processing Routed Message Args");
            return span.Length;
        }
        if (!TryParseSize(rest[args[count - 1]], out var size) || (headers && !TryParseSize(rest[args[count - 2]], out _)))
        {
            ProtocolError("Processing Routed Message Args");
            return span.Length;
        }
        var headerSize = -1;
        if (headers)
        {
            TryParseSize(rest[args[count - 2]], out headerSize);
            if (headerSize > size)
            {
                ProtocolError("Processing Routed Message Args");
                return span.Length;
            }
        }
        var needed = lf + 1 + size + 2;
        if (span.Length < needed)
        {
            return 0;
        }
        ReadOnlySpan<byte> reply = default;
        ReadOnlySpan<byte> queues = default;
        var middle = count - 2 - sizeArgs;
        if (middle == 1)
        {
            reply = rest[args[2]];
        }
        else if (middle > 1)
        {
            var indicator = rest[args[2]];
            int firstQueue;
            if (indicator.Length == 1 && indicator[0] == (byte)'+')
            {
                reply = rest[args[3]];
                firstQueue = 4;
            }
            else if (indicator.Length == 1 && indicator[0] == (byte)'|')
            {
                firstQueue = 3;
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
        InMsgs++;
        InBytes += size;
        var account = FindAccount(rest[args[0]]);
        if (account is not null)
        {
            _proxy.Router.RouteFromPeer(account, rest[args[1]], reply, queues, headerSize, message, this, origin);
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
        var connect = RouteConnect.Parse(json);
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
    }

    private void HandleInfo(ReadOnlySpan<byte> json)
    {
        var info = RouteInfo.Parse(json);
        if (info is null)
        {
            ProtocolError("Processing Route Info");
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

    private void HandleFirstInfo(RouteInfo info)
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
    }

    /// <summary>
    /// A local publish matched this peer's interest: one RMSG/HMSG (see <see cref="RouteOutbound.AppendMessage"/>),
    /// written at the end of <paramref name="publisher"/>'s batch. A client publisher that fills the
    /// route past its threshold waits for it to drain, as for a full client (memory stays bounded).
    /// </summary>
    public override void SendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, Delivery.MessageOrigin publisher)
    {
        var threshold = Math.Min(_cluster.Server.Options.MaxPending / 2, StallThresholdCap);
        // A message a leaf of another cluster sent goes on as LMSG with that cluster, so no hub hands it back to it.
        var origin = RemoteInfo is { Lnoc: true } ? publisher.LeafOrigin : null;
        if (!Outbound.AppendMessage(account, subject, reply, queues, headerSize, message, _peerHeaders, threshold, publisher.CanStall,
                out var stall, origin))
        {
            return;
        }
        if (stall)
        {
            publisher.StalledOn.Add(this);
        }
        publisher.FlushBatch.Add(Outbound.Queue);
    }

    /// <summary>
    /// A publisher waits for this route to drain. Go never cuts a route for being behind, only when a
    /// write makes no progress for the write deadline: so does this wait.
    /// </summary>
    public async ValueTask WaitUntilDrainedAsync()
    {
        var deadline = _cluster.Server.Options.WriteDeadline;
        if (await Outbound.Queue.WaitUntilDrainedAsync(deadline).ConfigureAwait(false) || IsClosed)
        {
            return;
        }
        _logger.LogInformation("{Route} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded", this, deadline);
        Close("Slow Consumer (Write Deadline)", flush: false);
    }

    void IOutboundOwner.OnWriteError() => Close("Write Error", flush: false);

    void IOutboundOwner.NoteWriteActivity()
    {
    }

    void IOutboundOwner.OnWriteLoopFailed(Exception exception)
    {
        _logger.LogError(exception, "{Route} - Unexpected error in route write loop", this);
        Close("Write Error", flush: false);
    }

    /// <summary>The cluster's periodic check: auth timeout, write deadline, PINGs and stale detection.</summary>
    internal void OnTick(long now)
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
        var writeStarted = Outbound.WriteStartedTicks;
        var options = _cluster.Server.Options;
        if (writeStarted != 0 && now - writeStarted > (long)options.WriteDeadline.TotalMilliseconds)
        {
            _logger.LogInformation("{Route} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded", this, GoDuration.Format(options.WriteDeadline));
            Close("Slow Consumer (Write Deadline)", flush: false);
            return;
        }
        if (now >= _nextPing)
        {
            _nextPing = now + (long)options.PingInterval.TotalMilliseconds;
            if (_pingsOut + 1 > options.MaxPingsOut)
            {
                _logger.LogDebug("{Route} - Stale Client Connection - Closing", this);
                SendError("Stale Connection");
                Close("Stale Connection");
                return;
            }
            _pingsOut++;
            _pingSentTicks = now;
            Outbound.Append("PING\r\n"u8);
        }
    }

    private void ProtocolError(string text)
    {
        _logger.LogError("{Route} - Route Error {Error}", this, text);
        SendError(text);
        Close("Protocol Violation");
    }

    /// <summary>Queues <c>-ERR 'text'</c> behind what is already queued (the INFO); the close writes it before the socket goes.</summary>
    private void SendError(string text) => Outbound.Append(Encoding.UTF8.GetBytes($"-ERR '{text}'\r\n"));

    /// <summary>Ends the route once: the peer's interest leaves the indexes and the cluster forgets it.</summary>
    public void Close(string reason, bool flush = true)
    {
        if (Interlocked.Exchange(ref _closing, 1) == 1)
        {
            return;
        }
        ClosedReason = reason;
        _logger.LogInformation("{Route} - Router connection closed: {Reason}", this, reason);
        Outbound.Close();
        _ = CloseSocketAfterFlushAsync(flush);
        _interest.RemoveAll();
        _cluster.OnRouteClosed(this, _registered);
        _closed.TrySetResult();
    }

    private Task? _writer;

    /// <summary>Lets the write loop put out what was queued before the close (bounded by the write deadline), then drops the socket.</summary>
    private async Task CloseSocketAfterFlushAsync(bool flush)
    {
        if (flush && _writer is { } writer)
        {
            try
            {
                await writer.WaitAsync(_cluster.Server.Options.WriteDeadline).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
        }
        _socket.Close();
    }
}
