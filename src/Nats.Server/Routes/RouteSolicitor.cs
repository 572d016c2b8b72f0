using System.Net.Sockets;
using Microsoft.Extensions.Logging;

namespace Nats.Server.Routes;

/// <summary>
/// Dials one route URL (Go's connectToRoute and reConnectToRoute): 1 s dial timeout, 1 s between failed
/// attempts, and after a route drops 1 s plus up to 100 ms of jitter before dialling again. An explicit
/// route is retried for as long as it is configured (or connect_retries times when set and never
/// connected); an implicit one learned by gossip is tried once, or connect_retries times.
/// While another connection to the same peer is up (a duplicate kept from the other side), it waits.
/// </summary>
internal sealed class RouteSolicitor
{
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1);

    private readonly ClusterService _cluster;
    private readonly Uri _url;
    private readonly bool _explicit;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _removed = new();
    private string? _peerId;
    private volatile bool _toSelf;

    public RouteSolicitor(ClusterService cluster, Uri url, bool isExplicit, ILogger logger)
    {
        _cluster = cluster;
        _url = url;
        _explicit = isExplicit;
        _logger = logger;
    }

    public Uri Url => _url;

    /// <summary>Completes when the first dial has failed or its route has registered or closed.</summary>
    public Task FirstAttempt => _firstAttempt.Task;

    private readonly TaskCompletionSource _firstAttempt = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>The URL leads back to this server: stop dialling it.</summary>
    public void MarkSelf() => _toSelf = true;

    public Task Start(CancellationToken stop)
    {
        var linked = CancellationTokenSource.CreateLinkedTokenSource(stop, _removed.Token);
        return Task.Run(async () =>
        {
            using (linked)
            {
                await RunAsync(linked.Token).ConfigureAwait(false);
            }
        }, CancellationToken.None);
    }

    /// <summary>The URL was removed from the routes by a reload: no more dialling (Go's setNoReconnect).</summary>
    public void Stop() => _removed.Cancel();

    private async Task RunAsync(CancellationToken stop)
    {
        var attempts = 0;
        // An implicit route dropped while the peer is still unreachable otherwise (both sides dialled at once and
        // each kept the other's duplicate) is dialled again a few times; then gossip has to bring it back.
        var redials = 0;
        var retries = _cluster.Options.ConnectRetries;
        try
        {
            while (!stop.IsCancellationRequested && !_toSelf)
            {
                if (_peerId is not null && _cluster.Table.Find(_peerId) is { } existing)
                {
                    if (!_explicit)
                    {
                        // The peer is connected the other way: this implicit route is not needed.
                        return;
                    }
                    await existing.Closed.WaitAsync(stop).ConfigureAwait(false);
                    await Task.Delay(ClusterOptions.ConnectRetryDelay + TimeSpan.FromMilliseconds(Random.Shared.Next(0, 100)), stop).ConfigureAwait(false);
                    continue;
                }
                var socket = await DialAsync(stop).ConfigureAwait(false);
                if (socket is null)
                {
                    _firstAttempt.TrySetResult();
                    attempts++;
                    if (!_explicit && (retries <= 0 || attempts > retries))
                    {
                        return;
                    }
                    await Task.Delay(ClusterOptions.ConnectRetryDelay, stop).ConfigureAwait(false);
                    continue;
                }
                attempts = 0;
                RouteConnection route;
                try
                {
                    route = _cluster.StartRoute(socket, solicited: true, url: _url, configured: _explicit);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    // The peer reset the connection before the route could even be set up (a proxy or a peer
                    // still starting): a failed dial, retried like one, not the end of this solicitor.
                    socket.Dispose();
                    _firstAttempt.TrySetResult();
                    _logger.LogDebug("Error trying to connect to route: {Error}", e.Message);
                    await Task.Delay(ClusterOptions.ConnectRetryDelay, stop).ConfigureAwait(false);
                    continue;
                }
                _ = Task.WhenAny(route.Registered, route.Closed).ContinueWith(_ => _firstAttempt.TrySetResult(), TaskScheduler.Default);
                await route.Closed.WaitAsync(stop).ConfigureAwait(false);
                if (route.RemoteId.Length > 0)
                {
                    _peerId = route.RemoteId;
                }
                if (!_explicit && ++redials > Math.Max(retries, 3))
                {
                    return;
                }
                await Task.Delay(ClusterOptions.ConnectRetryDelay + TimeSpan.FromMilliseconds(Random.Shared.Next(0, 100)), stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
        finally
        {
            _firstAttempt.TrySetResult();
        }
    }

    private async Task<Socket?> DialAsync(CancellationToken stop)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop);
        timeout.CancelAfter(DialTimeout);
        try
        {
            _logger.LogDebug("Trying to connect to route on {Host}:{Port}", _url.Host, _url.Port);
            await socket.ConnectAsync(_url.Host.Trim('[', ']'), _url.Port, timeout.Token).ConfigureAwait(false);
            socket.NoDelay = true;
            return socket;
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException)
        {
            socket.Dispose();
            stop.ThrowIfCancellationRequested();
            _logger.LogDebug("Error trying to connect to route: {Error}", e.Message);
            return null;
        }
    }
}
