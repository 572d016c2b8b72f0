using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Routes;

using static Nats.Server.Routes.PeerTokens;

namespace Nats.Server.Transport;

/// <summary>What a server-to-server connection (route, leaf, gateway) adds to the shared <see cref="RemoteLink"/>:
/// its protocol's verbs, its first-command rule and its cleanup.</summary>
internal interface IRemoteLinkOwner
{
    /// <summary>False (after closing) when <paramref name="op"/> may not come yet, e.g. anything before an awaited CONNECT.</summary>
    bool Admit(ReadOnlySpan<byte> op);

    /// <summary>One command other than PING/PONG starting at <paramref name="span"/>[0] with its line ending at
    /// <paramref name="lf"/>: returns the bytes consumed, 0 when a message payload has not fully arrived.</summary>
    int OnCommand(ReadOnlySpan<byte> span, int lf, ReadOnlySpan<byte> op, ReadOnlySpan<byte> rest, Span<Range> args);

    /// <summary>A malformed stream: the owner's log line, -ERR and close.</summary>
    void ProtocolError(string text);

    /// <summary>The link closed (once): the owner's log line and cleanup.</summary>
    void OnClosed(string reason);
}

/// <summary>
/// The connection lifecycle every peer server connection shares, whatever its protocol: the socket and the
/// pooled outbound queue with its write loop, the read loop with line splitting and its error handling, PING/PONG
/// with RTT and the stale count, the write-deadline cut with Go's slow consumer line, and the one close that
/// flushes what was queued (the -ERR) before dropping the socket. The owner parses everything else.
/// </summary>
internal sealed class RemoteLink : IOutboundOwner, IDrainable
{
    private const int MaxArgs = 256;
    private const int MaxBuffer = 64 * 1024 * 1024;

    // Chunk memory past which a local publisher waits for the peer to drain: larger than a client's (every
    // publisher shares the link), still small enough that many links hold little.
    private const long StallThresholdCap = 4 * 1024 * 1024;

    private readonly IRemoteLinkOwner _owner;
    private readonly NatsServer _server;
    private readonly ClientTransport _transport;
    private readonly PeerTls? _tls;
    private readonly ILogger _logger;
    private readonly string _kind;
    private readonly string _name;
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _closing;
    private long _nextPing = long.MaxValue;
    private int _pingsOut;
    private long _pingSentTicks;
    private Task? _writer;

    /// <param name="kind">The protocol as Go's log lines name it ("route", "leafnode", "gateway").</param>
    /// <param name="tag">The id prefix of the log name ("rid", "lid", "gid").</param>
    /// <param name="tls">Set when the link is secured before either side says anything (routes and gateways, as Go).</param>
    /// <param name="upgradable">The link may be secured later, after plain INFO (leaf connections, see <see cref="UpgradeBeforeNextRead"/>).</param>
    public RemoteLink(IRemoteLinkOwner owner, NatsServer server, Socket socket, ulong id, string kind, string tag, ILogger logger, PeerTls? tls = null,
        bool upgradable = false)
        : this(owner, server, tls is null && !upgradable ? new SocketTransport(socket) : (ClientTransport)new PeerTlsTransport(socket), socket.RemoteEndPoint as IPEndPoint,
            id, kind, tag, logger, tls)
    {
    }

    /// <summary>A link over a transport made elsewhere (a leaf connection over WebSocket).</summary>
    public RemoteLink(IRemoteLinkOwner owner, NatsServer server, ClientTransport transport, IPEndPoint? remote, ulong id, string kind, string tag,
        ILogger logger, PeerTls? tls = null)
    {
        _owner = owner;
        _server = server;
        _logger = logger;
        _kind = kind;
        _tls = tls;
        Id = id;
        _transport = transport;
        Outbound = new RouteOutbound(new OutboundQueue(this, _transport));
        // A local subscriber that is reading but behind pauses this reader (TCP then pushes back on the peer's
        // publishers) instead of being cut for max_pending; one that stops reading is cut after the stuck bound.
        Proxy = new Delivery.MessageOrigin(server, id, canStall: true);
        // A dialled socket is dual-mode: show an IPv4 peer as Go does, not as ::ffff:a.b.c.d.
        var address = remote?.Address is { IsIPv4MappedToIPv6: true } mapped ? mapped.MapToIPv4() : remote?.Address;
        RemoteIp = address?.ToString() ?? "";
        RemotePort = remote?.Port ?? 0;
        _name = $"{(remote is null ? "?" : $"{RemoteIp}:{RemotePort}")} - {tag}:{id}";
        Start = DateTime.UtcNow;
        LastActivityTicks = Environment.TickCount64;
    }

    public ulong Id { get; }
    public RouteOutbound Outbound { get; }

    /// <summary>Publishes what the peer sends to local subscribers; never paused by a slow one for good.</summary>
    public Delivery.MessageOrigin Proxy { get; }
    public string RemoteIp { get; }
    public int RemotePort { get; }
    public DateTime Start { get; }
    public string? ClosedReason { get; private set; }
    public TimeSpan Rtt { get; private set; }

    public long InMsgs;
    public long InBytes;
    public long LastActivityTicks;

    public Task Closed => _closed.Task;
    public bool IsClosed => Volatile.Read(ref _closing) == 1;

    /// <summary>Where the control line being handled sits in the read buffer (Go's parse errors quote the input from there).</summary>
    public byte[] Buffer { get; private set; } = [];
    public int LineStart { get; private set; }
    public int BufferEnd { get; private set; }

    public override string ToString() => _name;

    /// <summary>When the next PING goes (ticks); until set none does.</summary>
    public void SchedulePing(long at) => _nextPing = at;

    /// <summary>The negotiated TLS session of a secured link.</summary>
    public TlsConnectionState? Tls => _transport.Tls;

    /// <summary>The transport is a WebSocket (a leaf's <c>ws://</c> remote or one accepted on the websocket port).</summary>
    public bool IsWebSocket => _transport.IsWebSocket;

    private (PeerTls Tls, Action Secured)? _upgrade;

    /// <summary>
    /// Go's leaf TLS, which starts after the hub's plain INFO: the read loop stops after the command being handled (or
    /// before its first read), runs the handshake, then calls <paramref name="secured"/> (which queues what must go
    /// out encrypted) and reads on through TLS. A failed handshake is logged and closes the link, as Go.
    /// </summary>
    public void UpgradeBeforeNextRead(PeerTls tls, Action secured) => _upgrade = (tls, secured);

    /// <summary>
    /// Secures the link when asked (Go's doTLSHandshake, before anything else is said), starts the write loop, queues
    /// <paramref name="opening"/>'s lines, and runs the read loop until the link closes.
    /// </summary>
    public async Task RunAsync(Action opening)
    {
        if (_tls is not null && !await HandshakeAsync(_tls).ConfigureAwait(false))
        {
            return;
        }
        var writer = _writer = Task.Run(Outbound.RunWriteLoopAsync);
        opening();
        try
        {
            await ReadLoopAsync().ConfigureAwait(false);
        }
        catch (Exception e) when (e is SocketException or IOException or ObjectDisposedException or OperationCanceledException)
        {
            Close("Read Error");
        }
        catch (Exception e)
        {
            _logger.LogError(e, "{Peer} - Unexpected error in {Kind} read loop", this, _kind);
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
            if (_upgrade is var (tls, secured))
            {
                _upgrade = null;
                if (!await HandshakeAsync(tls).ConfigureAwait(false))
                {
                    return;
                }
                // The peer says nothing in plain text after the INFO that asked for TLS.
                start = end = 0;
                secured();
                continue;
            }
            if (end == buffer.Length)
            {
                if (start > 0)
                {
                    System.Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                    end -= start;
                    start = 0;
                }
                else if (buffer.Length >= MaxBuffer)
                {
                    _owner.ProtocolError("Maximum Control Line Exceeded");
                    return;
                }
                else
                {
                    Array.Resize(ref buffer, buffer.Length * 2);
                }
            }
            var n = await _transport.ReceiveAsync(buffer.AsMemory(end), CancellationToken.None).ConfigureAwait(false);
            if (n == 0)
            {
                Close("Client Closed");
                return;
            }
            end += n;
            Volatile.Write(ref LastActivityTicks, Environment.TickCount64);
            start = Process(buffer, start, end);
            Proxy.FlushBatch.FlushAll();
            while (Proxy.StalledOn.MustStall && !IsClosed)
            {
                await Proxy.StalledOn.WaitAllAsync().ConfigureAwait(false);
            }
            if (start == end)
            {
                start = end = 0;
            }
            else if (start > buffer.Length / 2)
            {
                System.Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                end -= start;
                start = 0;
            }
        }
    }

    /// <summary>Handles every complete command in buffer[start..end]; returns where the first incomplete one starts.</summary>
    private int Process(byte[] buffer, int start, int end)
    {
        Span<Range> args = stackalloc Range[MaxArgs];
        while (start < end && !IsClosed && _upgrade is null)
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
            if (!_owner.Admit(op))
            {
                return end;
            }
            if (Is(op, "PING"u8))
            {
                Outbound.Append("PONG\r\n"u8);
                start += lf + 1;
                continue;
            }
            if (Is(op, "PONG"u8))
            {
                OnPong();
                start += lf + 1;
                continue;
            }
            (Buffer, LineStart, BufferEnd) = (buffer, start, end);
            var consumed = _owner.OnCommand(span, lf, op, rest, args);
            if (consumed == 0)
            {
                return start;
            }
            start += consumed;
        }
        return start;
    }

    private void OnPong()
    {
        _pingsOut = 0;
        if (_pingSentTicks != 0)
        {
            Rtt = TimeSpan.FromMilliseconds(Environment.TickCount64 - _pingSentTicks);
            _pingSentTicks = 0;
        }
    }

    /// <summary>
    /// A message for the peer, written at the end of <paramref name="publisher"/>'s batch. A publisher that can
    /// wait and fills the link past its threshold waits for it to drain, as for a full client (memory stays bounded).
    /// </summary>
    public void SendMessage(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> queues,
        int headerSize, ReadOnlySpan<byte> message, bool headers, Delivery.MessageOrigin publisher, byte[]? origin = null)
    {
        var threshold = Math.Min(_server.Options.MaxPending / 2, StallThresholdCap);
        if (!Outbound.AppendMessage(account, subject, reply, queues, headerSize, message, headers, threshold, publisher.CanStall,
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
    /// A publisher waits for this link to drain. Go never cuts a server connection for being behind, only when a
    /// write makes no progress for the write deadline: so does this wait.
    /// </summary>
    public async ValueTask WaitUntilDrainedAsync()
    {
        var deadline = _server.Options.WriteDeadline;
        if (await Outbound.Queue.WaitUntilDrainedAsync(deadline).ConfigureAwait(false) || IsClosed)
        {
            return;
        }
        SlowConsumer();
    }

    private void SlowConsumer()
    {
        _logger.LogInformation("{Peer} - Slow Consumer Detected: WriteDeadline of {Deadline} exceeded with {Chunks} chunks of {Pending} total bytes.",
            this, GoDuration.Format(_server.Options.WriteDeadline), Outbound.Queue.PendingChunks, Outbound.Queue.PendingAndInFlight);
        Close("Slow Consumer (Write Deadline)", flush: false);
    }

    void IOutboundOwner.OnWriteError() => Close("Write Error", flush: false);

    void IOutboundOwner.NoteWriteActivity()
    {
    }

    void IOutboundOwner.OnWriteLoopFailed(Exception exception)
    {
        _logger.LogError(exception, "{Peer} - Unexpected error in {Kind} write loop", this, _kind);
        Close("Write Error", flush: false);
    }

    /// <summary>The periodic check after the owner's own deadlines: the write deadline, PINGs and stale detection.</summary>
    public void OnTick(long now)
    {
        if (IsClosed)
        {
            return;
        }
        var options = _server.Options;
        var writeStarted = Outbound.WriteStartedTicks;
        if (writeStarted != 0 && now - writeStarted > (long)options.WriteDeadline.TotalMilliseconds)
        {
            SlowConsumer();
            return;
        }
        if (now >= _nextPing)
        {
            var interval = options.PingInterval < PingCap ? options.PingInterval : PingCap;
            _nextPing = now + (long)interval.TotalMilliseconds;
            if (_pingsOut + 1 > options.MaxPingsOut)
            {
                _logger.LogDebug("{Peer} - Stale Client Connection - Closing", this);
                SendError("Stale Connection");
                Close("Stale Connection");
                return;
            }
            _pingsOut++;
            _pingSentTicks = now;
            Outbound.Append("PING\r\n"u8);
        }
    }

    /// <summary>A bound on the interval between PINGs below the server's ping_interval (Go's gateways ping at most every 15 s).</summary>
    public TimeSpan PingCap { get; set; } = TimeSpan.MaxValue;

    /// <summary>Queues <c>-ERR 'text'</c> behind what is already queued; the close writes it before the socket goes.</summary>
    public void SendError(string text) => Outbound.Append(Encoding.UTF8.GetBytes($"-ERR '{text}'\r\n"));

    /// <summary>Ends the link once: the owner cleans up, what was queued goes out (bounded by the write deadline), the socket closes.</summary>
    public void Close(string reason, bool flush = true)
    {
        if (Interlocked.Exchange(ref _closing, 1) == 1)
        {
            return;
        }
        ClosedReason = reason;
        Outbound.Close();
        _ = CloseSocketAfterFlushAsync(flush);
        _owner.OnClosed(reason);
        _closed.TrySetResult();
    }

    private async Task CloseSocketAfterFlushAsync(bool flush)
    {
        if (flush && _writer is { } writer)
        {
            try
            {
                await writer.WaitAsync(_server.Options.WriteDeadline).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }
        _transport.Abort();
    }

    private async Task<bool> HandshakeAsync(PeerTls tls)
    {
        _logger.LogDebug("{Peer} - Starting TLS {Kind} {Side} handshake", this, _kind, tls.Solicit ? "client" : "server");
        var error = await ((PeerTlsTransport)_transport).HandshakeAsync(tls).ConfigureAwait(false);
        if (error is null && Nats.Server.Tls.PinnedCertificates.Check(tls.Pinned, _transport.Tls?.PeerCertificate) is { } unpinned)
        {
            _logger.LogDebug("{Peer} - {Reason}", this, unpinned);
            error = Nats.Server.Tls.PinnedCertificates.NotPinned;
        }
        if (error is not null)
        {
            _logger.LogError("{Peer} - TLS {Kind} handshake error: {Error}", this, _kind, error);
            Close("TLS Handshake Failure", flush: false);
            return false;
        }
        _logger.LogDebug("{Peer} - TLS handshake complete", this);
        _logger.LogDebug("{Peer} - TLS version {Version}, cipher suite {Cipher}", this, Tls!.Version, Tls.CipherSuite);
        return true;
    }
}
