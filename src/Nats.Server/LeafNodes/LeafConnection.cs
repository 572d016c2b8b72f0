using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Configuration;
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
internal sealed class LeafConnection : Delivery.RemotePeer, IOutboundOwner, IDrainable
{
    private const int MaxArgs = 256;
    private const int MaxBuffer = 64 * 1024 * 1024;
    private const long StallThresholdCap = 4 * 1024 * 1024;

    // Go's DEFAULT_LEAFNODE_INFO_WAIT and connectProcessTimeout.
    private static readonly TimeSpan InfoWait = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan ConnectProcessTimeout = TimeSpan.FromSeconds(2);

    private readonly LeafNodeService _service;
    private readonly Socket _socket;
    private readonly ILogger _logger;
    private readonly RemoteInterest _interest;
    private readonly Delivery.MessageOrigin _proxy;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly string _remoteAddress;
    private int _closing;
    private bool _connectReceived;
    private bool _infoReceived;
    private bool _peerHeaders;
    private long _deadline;
    private long _nextPing;
    private int _pingsOut;
    private long _pingSentTicks;
    private string? _nonce;
    private Task? _writer;
    private string _remoteCluster = "";
    private byte[] _remoteClusterUtf8 = [];
    private readonly LeafSolicitor? _solicitor;

    // Where the control line being handled sits in the read buffer (Go's parse error quotes the input from there).
    private byte[] _buffer = [];
    private int _lineStart;
    private int _bufferEnd;

    public LeafConnection(LeafNodeService service, Socket socket, ulong id, LeafSolicitor? solicitor, Uri? url, ILogger logger)
        : base(solicitor is { Remote.Hub: false } ? Delivery.PeerRole.SpokeLeaf : Delivery.PeerRole.HubLeaf)
    {
        _service = service;
        _socket = socket;
        _logger = logger;
        Id = id;
        _solicitor = solicitor;
        Url = url;
        Outbound = new RouteOutbound(new OutboundQueue(this, new Transport.SocketTransport(socket)));
        _interest = new RemoteInterest(this);
        Sent = new LeafSubjectMap(this);
        // As on a route: a local subscriber that is reading but behind pauses this reader (TCP pushes back on the
        // peer) instead of being cut for max_pending.
        _proxy = new Delivery.MessageOrigin(service.Server, id, canStall: true);
        var endpoint = socket.RemoteEndPoint as IPEndPoint;
        var address = endpoint?.Address is { IsIPv4MappedToIPv6: true } mapped ? mapped.MapToIPv4() : endpoint?.Address;
        RemoteIp = address?.ToString() ?? "";
        RemotePort = endpoint?.Port ?? 0;
        _remoteAddress = endpoint is null ? "?" : $"{RemoteIp}:{RemotePort}";
        Start = DateTime.UtcNow;
        LastActivityTicks = Environment.TickCount64;
    }

    public ulong Id { get; }

    /// <summary>The remote this connection was dialled for; null for an accepted one.</summary>
    public LeafRemote? Remote => _solicitor?.Remote;
    public Uri? Url { get; }
    public bool Solicited => Remote is not null;
    public RouteOutbound Outbound { get; }
    public LeafSubjectMap Sent { get; }
    public string RemoteIp { get; }
    public int RemotePort { get; }
    public DateTime Start { get; }

    /// <summary>The account the connection is bound to (after CONNECT on the hub, at creation on the spoke).</summary>
    public Account? Account { get; private set; }
    public string RemoteServerName { get; private set; } = "";
    public override string RemoteCluster => _remoteCluster;
    public override byte[] RemoteClusterUtf8 => _remoteClusterUtf8;
    public string? ClosedReason { get; private set; }
    public bool IsRegistered { get; private set; }

    /// <summary>Subjects this connection may not carry out (publish deny) and may not ask for (subscribe deny):
    /// the remote's deny lists, the hub's <c>deny_pub</c> and Go's JetStream denies.</summary>
    public LeafPermissions Permissions { get; } = new();

    public long InMsgs;
    public long InBytes;
    public long LastActivityTicks;
    public TimeSpan Rtt { get; private set; }

    public Task Closed => _closed.Task;
    public bool IsClosed => Volatile.Read(ref _closing) == 1;
    public int SubscriptionCount => _interest.Count;
    internal RemoteInterest Interest => _interest;

    public override string ToString() => $"{_remoteAddress} - lid:{Id}";

    public async Task RunAsync()
    {
        var writer = _writer = Task.Run(Outbound.RunWriteLoopAsync);
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
            _deadline = now + (long)_service.Options.AuthTimeout.TotalMilliseconds;
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
            _logger.LogError(e, "{Leaf} - Unexpected error in leafnode read loop", this);
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
            if (!_connectReceived && !Solicited && !Is(op, "CONNECT"u8))
            {
                // Go's expectConnect: a leaf must bind its account before anything else.
                AuthViolation();
                return end;
            }
            if (Is(op, "LMSG"u8) || Is(op, "HMSG"u8) || Is(op, "RMSG"u8))
            {
                var consumed = HandleMessage(span, lf, rest, Is(op, "HMSG"u8), args);
                if (consumed == 0)
                {
                    return start;
                }
                start += consumed;
                continue;
            }
            (_buffer, _lineStart, _bufferEnd) = (buffer, start, end);
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
        else if (Is(op, "LS+"u8) || Is(op, "RS+"u8))
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
        var stop = Math.Min(_lineStart + 32, _bufferEnd - 1);
        var snippet = Encoding.UTF8.GetString(_buffer, _lineStart, Math.Max(0, stop - _lineStart));
        _logger.LogError("{Leaf} - Leafnode parser ERROR, state=0, i={Offset}: proto='{Snippet}...'", this, _lineStart, GoQuote(snippet));
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
        if (count < 1 + sizeArgs || count > MaxArgs || !TryParseSize(rest[args[count - 1]], out var size))
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
        InMsgs++;
        InBytes += size;
        if (Account is { } account && IsRegistered)
        {
            _proxy.Router.RouteFromPeer(account, rest[args[0]], reply, queues, headerSize, message, this);
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
        var connect = LeafConnect.Parse(json);
        if (connect is null)
        {
            ProtocolError("Processing Leaf Connect");
            return;
        }
        // Go authenticates first (processConnect), then looks at what connected (processLeafNodeConnect).
        var accountName = _service.Authenticate(connect.User, connect.Pass);
        var account = accountName is null ? null : _service.Server.FindAccount(accountName);
        if (account is null)
        {
            AuthViolation();
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
            _proxy.LeafOrigin = _remoteClusterUtf8;
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
        var info = LeafInfo.Parse(json);
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
            _peerHeaders = info.Headers && !_service.Server.Options.NoHeaderSupport;
            RemoteServerName = string.IsNullOrEmpty(info.ServerName) ? info.ServerId : info.ServerName;
            _remoteCluster = info.Cluster ?? "";
            _remoteClusterUtf8 = Encoding.UTF8.GetBytes(_remoteCluster);
        }
        if (info.LeafNodeUrls is { Count: > 0 } urls)
        {
            _solicitor!.LearnUrls(urls);
        }
        if (first)
        {
            Outbound.Append(_service.BuildConnect(Remote!, Url));
            _deadline = Environment.TickCount64 + (long)ConnectProcessTimeout.TotalMilliseconds;
            if (!info.InfoOnConnect)
            {
                FinishSolicited();
            }
            return;
        }
        if (info.ConnectInfo)
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
        }
        var first = Math.Min(1000, (long)_service.Server.Options.PingInterval.TotalMilliseconds);
        _nextPing = Environment.TickCount64 + first;
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
        var threshold = Math.Min(_service.Server.Options.MaxPending / 2, StallThresholdCap);
        if (!Outbound.AppendMessage(default, subject, reply, queues, headerSize, message, _peerHeaders, threshold, publisher.CanStall, out var stall))
        {
            return;
        }
        if (stall)
        {
            publisher.StalledOn.Add(this);
        }
        publisher.FlushBatch.Add(Outbound.Queue);
    }

    public async ValueTask WaitUntilDrainedAsync()
    {
        var deadline = _service.Server.Options.WriteDeadline;
        if (await Outbound.Queue.WaitUntilDrainedAsync(deadline).ConfigureAwait(false) || IsClosed)
        {
            return;
        }
        _logger.LogInformation("{Leaf} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded", this, GoDuration.Format(deadline));
        Close("Slow Consumer (Write Deadline)", flush: false);
    }

    void IOutboundOwner.OnWriteError() => Close("Write Error", flush: false);

    void IOutboundOwner.NoteWriteActivity()
    {
    }

    void IOutboundOwner.OnWriteLoopFailed(Exception exception)
    {
        _logger.LogError(exception, "{Leaf} - Unexpected error in leafnode write loop", this);
        Close("Write Error", flush: false);
    }

    /// <summary>The service's periodic check: handshake deadlines, write deadline, PINGs and stale detection.</summary>
    internal void OnTick(long now)
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
        var options = _service.Server.Options;
        var writeStarted = Outbound.WriteStartedTicks;
        if (writeStarted != 0 && now - writeStarted > (long)options.WriteDeadline.TotalMilliseconds)
        {
            _logger.LogInformation("{Leaf} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded", this, GoDuration.Format(options.WriteDeadline));
            Close("Slow Consumer (Write Deadline)", flush: false);
            return;
        }
        if (IsRegistered && now >= _nextPing)
        {
            _nextPing = now + (long)options.PingInterval.TotalMilliseconds;
            if (_pingsOut + 1 > options.MaxPingsOut)
            {
                _logger.LogDebug("{Leaf} - Stale Client Connection - Closing", this);
                SendError("Stale Connection");
                Close("Stale Connection");
                return;
            }
            _pingsOut++;
            _pingSentTicks = now;
            Outbound.Append("PING\r\n"u8);
        }
    }

    private void AuthViolation()
    {
        // Go names the user only when the server has client users; the leaf block's own never are.
        _logger.LogError("{Leaf} - authentication error", this);
        SendError("Authorization Violation");
        Close("Authentication Failure");
    }

    private void ProtocolError(string text)
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

    private void SendError(string text) => Outbound.Append(Encoding.UTF8.GetBytes($"-ERR '{text}'\r\n"));

    /// <summary>Ends the connection once: the peer's interest leaves the account, the service forgets it.</summary>
    public void Close(string reason, bool flush = true)
    {
        if (Interlocked.Exchange(ref _closing, 1) == 1)
        {
            return;
        }
        ClosedReason = reason;
        _logger.LogInformation("{Leaf} - Leafnode connection closed: {Reason} account: {Account}", this, reason, Account?.Name ?? "");
        Outbound.Close();
        _ = CloseSocketAfterFlushAsync(flush);
        _interest.RemoveAll();
        if (IsRegistered)
        {
            Account?.RemoveLeaf();
        }
        _service.OnClosed(this);
        _closed.TrySetResult();
    }

    private async Task CloseSocketAfterFlushAsync(bool flush)
    {
        if (flush && _writer is { } writer)
        {
            try
            {
                await writer.WaitAsync(_service.Server.Options.WriteDeadline).ConfigureAwait(false);
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
