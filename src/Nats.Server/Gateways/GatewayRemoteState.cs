using System.Net.Sockets;
using Microsoft.Extensions.Logging;

namespace Nats.Server.Gateways;

/// <summary>
/// One remote gateway (cluster) and the loop that keeps an outbound connection to it (Go's gatewayCfg and
/// solicitGateway): its URLs (configured, then those its servers advertise), 1 s between rounds and
/// 1 s + 0–100 ms after a drop. An implicit one (learned by gossip or from an inbound) gives up after
/// <c>connect_retries</c> rounds unless that cluster still has an inbound connection to us.
/// </summary>
internal sealed class GatewayRemoteState
{
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan ConnectDelay = TimeSpan.FromSeconds(1);

    private readonly GatewayService _service;
    private readonly ILogger _logger;
    private readonly Lock _sync = new();
    private readonly List<Uri> _urls = [];

    public GatewayRemoteState(GatewayService service, string name, IEnumerable<Uri> urls, bool implicitRemote, ILogger logger)
    {
        _service = service;
        _logger = logger;
        Name = name;
        Hash = GatewayHash.Of(name);
        Implicit = implicitRemote;
        _urls.AddRange(urls);
    }

    public string Name { get; }
    public byte[] Hash { get; }
    public bool Implicit { get; }

    public List<Uri> Urls
    {
        get
        {
            lock (_sync)
            {
                return [.. _urls];
            }
        }
    }

    /// <summary>URLs a server of that cluster advertised (gateway_urls), as host:port.</summary>
    public void AddUrls(IEnumerable<string> hostPorts)
    {
        lock (_sync)
        {
            foreach (var hostPort in hostPorts)
            {
                if (Uri.TryCreate($"nats://{hostPort}", UriKind.Absolute, out var url) &&
                    !_urls.Any(u => string.Equals(u.Host, url.Host, StringComparison.OrdinalIgnoreCase) && u.Port == url.Port))
                {
                    _urls.Add(url);
                }
            }
        }
    }

    public Task Start(TimeSpan delay, CancellationToken stop) => Task.Run(() => RunAsync(delay, stop), CancellationToken.None);

    private async Task RunAsync(TimeSpan delay, CancellationToken stop)
    {
        var kind = Implicit ? "implicit" : "explicit";
        try
        {
            if (delay > TimeSpan.Zero)
            {
                await Task.Delay(delay, stop).ConfigureAwait(false);
            }
            var attempts = 0;
            while (!stop.IsCancellationRequested)
            {
                attempts++;
                var urls = Urls;
                Random.Shared.Shuffle(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(urls));
                GatewayConnection? connection = null;
                foreach (var url in urls)
                {
                    var address = $"{url.Host}:{url.Port}";
                    _logger.LogInformation("Connecting to {Kind} gateway \"{Name}\" ({Host}) at {Address} (attempt {Attempt})", kind, Name, address, address, attempts);
                    var socket = await DialAsync(url, stop).ConfigureAwait(false);
                    if (socket is null)
                    {
                        _logger.LogError("Error connecting to {Kind} gateway \"{Name}\" ({Host}) at {Address} (attempt {Attempt}): {Error}", kind, Name, address,
                            address, attempts, _lastError);
                        continue;
                    }
                    connection = _service.StartConnection(socket, this, url);
                    break;
                }
                if (connection is not null)
                {
                    await connection.Link.Closed.WaitAsync(stop).ConfigureAwait(false);
                    attempts = 0;
                    var jitter = TimeSpan.FromMilliseconds(Random.Shared.Next(100));
                    await Task.Delay(Implicit ? jitter : ConnectDelay + jitter, stop).ConfigureAwait(false);
                    continue;
                }
                if (Implicit && (_service.Options.ConnectRetries == 0 || attempts > _service.Options.ConnectRetries))
                {
                    if (!_service.HasInbound(Name))
                    {
                        _service.ForgetImplicit(this);
                        return;
                    }
                }
                await Task.Delay(ConnectDelay, stop).ConfigureAwait(false);
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
