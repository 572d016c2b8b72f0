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
    }

    public LeafRemote Remote { get; }

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
                Socket? socket = null;
                Uri url = Remote.Urls[0];
                while (socket is null)
                {
                    url = PickNext();
                    socket = await DialAsync(url, stop).ConfigureAwait(false);
                    if (socket is null)
                    {
                        attempts++;
                        if (!firstConnect || attempts == 1)
                        {
                            _logger.LogError("Error trying to connect as leafnode to remote server \"{Host}\" (attempt {Attempt}): {Error}",
                                $"{url.Host}:{url.Port}", attempts, _lastError);
                        }
                        await Task.Delay(interval, stop).ConfigureAwait(false);
                    }
                }
                firstConnect = false;
                LeafConnection connection;
                try
                {
                    connection = _service.StartConnection(socket, this, url);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    socket.Dispose();
                    await Task.Delay(interval, stop).ConfigureAwait(false);
                    continue;
                }
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

    private string _lastError = "";

    private async Task<Socket?> DialAsync(Uri url, CancellationToken stop)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop);
        timeout.CancelAfter(DialTimeout);
        try
        {
            _logger.LogDebug("Trying to connect as leafnode to remote server on \"{Host}:{Port}\"", url.Host, url.Port);
            await socket.ConnectAsync(url.Host.Trim('[', ']'), url.Port, timeout.Token).ConfigureAwait(false);
            socket.NoDelay = true;
            return socket;
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException)
        {
            socket.Dispose();
            stop.ThrowIfCancellationRequested();
            _lastError = e is SocketException { SocketErrorCode: SocketError.ConnectionRefused }
                ? $"dial tcp {url.Host}:{url.Port}: connect: connection refused"
                : $"dial tcp {url.Host}:{url.Port}: i/o timeout";
            return null;
        }
    }
}
