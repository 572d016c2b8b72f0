using System.Net.Sockets;
using Microsoft.Extensions.Logging;

namespace Nats.Server.LeafNodes;

/// <summary>
/// Dials one remote (Go's connectToRemoteLeafNode): the URLs in turn (configured ones plus those the hub
/// advertises in leafnode_urls), the reconnect interval between attempts and after a connection drops, 30 s
/// after a loop or a cluster-name clash. Go's error line for a failed dial is logged on the first attempt and
/// then at every attempt after a connection was lost.
/// </summary>
internal sealed class LeafSolicitor
{
    /// <summary>Go's leafNodeReconnectDelayAfterLoopDetected (and after a cluster-name clash).</summary>
    public static readonly TimeSpan ErrorDelay = TimeSpan.FromSeconds(30);

    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1);

    private readonly LeafNodeService _service;
    private readonly ILogger _logger;
    private readonly Lock _sync = new();
    private List<Uri> _urls;
    private int _next;
    private long _delayTicks;
    private string _tlsName = "";
    private volatile bool _hubRequiresTls;

    public LeafSolicitor(LeafNodeService service, LeafRemote remote, ILogger logger)
    {
        _service = service;
        Remote = remote;
        _logger = logger;
        _urls = [.. remote.Urls];
        if (!remote.NoRandomize)
        {
            Random.Shared.Shuffle(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(_urls));
        }
        foreach (var url in _urls)
        {
            SaveTlsName(url);
            // Go's saveUserPassword: a URL the hub advertises has no user info; the configured one's is used with it.
            if (User is null && url.UserInfo.Length > 0)
            {
                (User, Password) = Transport.UrlCredentials.Of(url);
            }
        }
        // Go: a wss:// remote uses TLS with or without a tls {} block.
        _hubRequiresTls = _urls.Any(u => u.Scheme == "wss");
    }

    public LeafRemote Remote { get; }

    /// <summary>The user and password of the first configured URL that has them.</summary>
    public string? User { get; }
    public string? Password { get; }

    /// <summary>Go's saveTLSHostname: the first host name (not an IP) among the URLs, the TLS server name for an IP URL.</summary>
    private void SaveTlsName(Uri url)
    {
        if (_tlsName.Length == 0 && url.HostNameType == UriHostNameType.Dns)
        {
            _tlsName = url.IdnHost;
        }
    }

    /// <summary>The hub's INFO said tls_required: this and every later connection of the remote use TLS (Go's remote.TLS).</summary>
    public void NoteHubRequiresTls() => _hubRequiresTls = true;

    /// <summary>
    /// Go's leafNodeGetTLSConfigForSolicit: TLS when the remote has a <c>tls {}</c> block, a wss:// URL or a hub that asked
    /// for it; the server name is the URL's host, or for an IP the saved host name.
    /// </summary>
    public Transport.PeerTls? TlsFor(Uri url)
    {
        if (Remote.TlsContext is null && !_hubRequiresTls)
        {
            return null;
        }
        var host = url.HostNameType == UriHostNameType.Dns || _tlsName.Length == 0 ? url.IdnHost.Trim('[', ']') : _tlsName;
        return new Transport.PeerTls(Remote.TlsContext ?? Tls.TlsServerContext.DefaultClient, Solicit: true, host, RequireCertificate: false,
            _service.Options.TlsContext?.Options.PinnedCerts);
    }

    /// <summary>The connection up now, if any (for /leafz and tests).</summary>
    public LeafConnection? Current { get; private set; }

    public void DelayNextConnect(TimeSpan delay) => Volatile.Write(ref _delayTicks, (long)delay.TotalMilliseconds);

    /// <summary>Go's doUpdateLNURLs: the hub's advertised URLs first, then the configured ones.</summary>
    public void LearnUrls(List<string> advertised)
    {
        var scheme = Remote.Urls[0].Scheme;
        var urls = new List<Uri>();
        foreach (var hostPort in advertised)
        {
            if (Uri.TryCreate($"{scheme}://{hostPort}", UriKind.Absolute, out var url) &&
                !Remote.Urls.Any(u => string.Equals(u.Host, url.Host, StringComparison.OrdinalIgnoreCase) && u.Port == url.Port))
            {
                urls.Add(url);
                SaveTlsName(url);
            }
        }
        urls.AddRange(Remote.Urls);
        lock (_sync)
        {
            _urls = urls;
            _next = 0;
        }
    }

    private Uri PickNext()
    {
        lock (_sync)
        {
            var url = _urls[_next % _urls.Count];
            _next = (_next + 1) % _urls.Count;
            return url;
        }
    }

    public Task Start(CancellationToken stop) => Task.Run(() => RunAsync(stop), CancellationToken.None);

    private async Task RunAsync(CancellationToken stop)
    {
        var interval = _service.Options.ReconnectInterval;
        var firstConnect = true;
        try
        {
            while (!stop.IsCancellationRequested)
            {
                var delay = Interlocked.Exchange(ref _delayTicks, 0);
                if (delay > 0)
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(delay), stop).ConfigureAwait(false);
                }
                var attempts = 0;
                LeafConnection? connection = null;
                while (connection is null)
                {
                    var url = PickNext();
                    var (started, dialError) = await ConnectAsync(url, stop).ConfigureAwait(false);
                    if (started is null)
                    {
                        attempts++;
                        if (dialError is not null && (!firstConnect || attempts == 1))
                        {
                            _logger.LogError("Error trying to connect as leafnode to remote server \"{Host}\" (attempt {Attempt}): {Error}",
                                $"{url.Host}:{url.Port}", attempts, dialError);
                        }
                        await Task.Delay(interval, stop).ConfigureAwait(false);
                    }
                    connection = started;
                }
                firstConnect = false;
                Current = connection;
                await connection.Closed.WaitAsync(stop).ConfigureAwait(false);
                Current = null;
                await Task.Delay(interval, stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    /// <summary>
    /// Dials <paramref name="url"/> and starts the connection on it; null with Go's dial line when TCP failed, null
    /// without one when a websocket upgrade failed (logged here, as Go's "Error soliciting websocket connection").
    /// </summary>
    private async Task<(LeafConnection? Connection, string? DialError)> ConnectAsync(Uri url, CancellationToken stop)
    {
        _logger.LogDebug("Trying to connect as leafnode to remote server on \"{Host}:{Port}\"", url.Host, url.Port);
        if (Remote.IsWebSocket)
        {
            var (transport, remote, error, tcpFailed) = await LeafWebSocketDialer.ConnectAsync(this, url, DialTimeout, line => _logger.LogError("{Error}", line), stop).ConfigureAwait(false);
            if (transport is null)
            {
                if (tcpFailed)
                {
                    return (null, error);
                }
                _logger.LogError("Error soliciting websocket connection: {Error}", error);
                return (null, null);
            }
            return (_service.StartConnection(transport, remote, this, url), null);
        }
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop);
        timeout.CancelAfter(DialTimeout);
        try
        {
            await socket.ConnectAsync(url.Host.Trim('[', ']'), url.Port, timeout.Token).ConfigureAwait(false);
            socket.NoDelay = true;
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException)
        {
            socket.Dispose();
            stop.ThrowIfCancellationRequested();
            return (null, e is SocketException { SocketErrorCode: SocketError.ConnectionRefused }
                ? $"dial tcp {url.Host}:{url.Port}: connect: connection refused"
                : $"dial tcp {url.Host}:{url.Port}: i/o timeout");
        }
        try
        {
            return (_service.StartConnection(socket, this, url), null);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Reset between connect and set-up: the next attempt follows after the interval.
            socket.Dispose();
            return (null, null);
        }
    }
}
