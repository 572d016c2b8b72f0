using System.IO.Pipelines;
using System.Net;
using Microsoft.Extensions.Logging;
using Nats.Server.Hosting;
using Nats.Server.Transport;

namespace Nats.Server.Embedding;

/// <summary>
/// A NATS server running inside this process: start it, connect any NATS client to <see cref="ClientUrl"/>,
/// stop it. One instance runs once; start a new one to restart.
/// </summary>
/// <example>
/// <code>
/// await using var nats = await NatsServerHost.StartAsync();
/// await using var client = new NatsConnection(new NatsOpts { Url = nats.ClientUrl });
/// </code>
/// </example>
public sealed class NatsServerHost : IAsyncDisposable
{
    private readonly NatsServerHostOptions _hostOptions;
    private readonly ILoggerFactory? _fallbackLoggerFactory;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly SemaphoreSlim _lifecycle = new(1, 1);
    private NatsServer? _server;
    private string? _temporaryStoreDir;
    private bool _started;
    private bool _stopped;

    /// <summary>Creates the host; nothing listens until <see cref="StartAsync(CancellationToken)"/>.</summary>
    public NatsServerHost(NatsServerHostOptions? options = null)
        : this(options, null)
    {
    }

    internal NatsServerHost(NatsServerHostOptions? options, ILoggerFactory? fallbackLoggerFactory)
    {
        _hostOptions = options ?? new NatsServerHostOptions();
        _fallbackLoggerFactory = fallbackLoggerFactory;
    }

    /// <summary>Raised once, when clients can connect (the listener is bound and accepting).</summary>
    public event EventHandler? Ready;

    /// <summary>Creates and starts a server; returns when it is ready for clients.</summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("ApiDesign", "RS0026", Justification = "Shipped in 0.1.0: the static one-call start and the instance start of a host built first; their first parameters differ in type, so no call is ambiguous.")]
    public static async Task<NatsServerHost> StartAsync(NatsServerHostOptions? options = null, CancellationToken cancellationToken = default)
    {
        var host = new NatsServerHost(options);
        try
        {
            await host.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await host.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return host;
    }

    /// <summary>True between readiness and stop.</summary>
    public bool IsReady => _ready.Task.IsCompletedSuccessfully && !_stopped;

    /// <summary>The bound client port (the chosen one when the options asked for port 0).</summary>
    public int Port => Running.Port;

    /// <summary>
    /// Where clients connect: <c>nats://host:port</c>, with a loopback address when the server listens on
    /// every interface.
    /// </summary>
    public string ClientUrl => $"nats://{ConnectHost(Running.Options.Host)}:{Port}";

    /// <summary>The bound monitoring port, or 0 when monitoring is off.</summary>
    public int MonitoringPort => Running.MonitoringPort;

    /// <summary>The monitoring base URL (e.g. <c>http://127.0.0.1:38222</c>), or null when monitoring is off.</summary>
    public string? MonitoringUrl
    {
        get
        {
            var server = Running;
            if (server.MonitoringPort == 0)
            {
                return null;
            }
            var host = string.IsNullOrEmpty(server.Options.HttpHost) ? server.Options.Host : server.Options.HttpHost;
            return $"http://{ConnectHost(host)}:{server.MonitoringPort}";
        }
    }

    /// <summary>The server itself, for this assembly's tests and tools; null before start.</summary>
    internal NatsServer? Server => _server;

    /// <summary>The server id clients see in INFO.</summary>
    public string ServerId => Running.ServerId;

    /// <summary>The server name clients see in INFO.</summary>
    public string ServerName => Running.ServerName;

    /// <summary>
    /// Binds the listeners and starts accepting clients; returns once the server is ready. Throws
    /// <see cref="Configuration.ConfigurationException"/> for invalid settings and the socket error when a port is taken.
    /// </summary>
    [System.Diagnostics.CodeAnalysis.SuppressMessage("ApiDesign", "RS0026", Justification = "Shipped in 0.1.0: the static one-call start and the instance start of a host built first; their first parameters differ in type, so no call is ambiguous.")]
    public async Task StartAsync(CancellationToken cancellationToken = default)
    {
        await _lifecycle.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_started)
            {
                throw new InvalidOperationException("This server host was already started; create a new one to start again.");
            }
            _started = true;
            try
            {
                var options = _hostOptions.BuildServerOptions(out _temporaryStoreDir);
                var server = new NatsServer(options, _hostOptions.LoggerFactory ?? _fallbackLoggerFactory);
                _server = server;
                await server.StartAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                _ready.TrySetException(e);
                throw;
            }
        }
        finally
        {
            _lifecycle.Release();
        }
        _ready.TrySetResult();
        Ready?.Invoke(this, EventArgs.Empty);
    }

    /// <summary>
    /// Opens a client connection with no socket: the server admits it exactly like a TCP client (INFO,
    /// CONNECT, authorization, limits, monitoring) and speaks the NATS protocol over the returned pipes.
    /// Complete <see cref="IDuplexPipe.Output"/> to close it; <see cref="IDuplexPipe.Input"/> ends when the server
    /// closes it. For NATS.Net, the Nats.Server.NatsNet package wraps this as a socket connection factory.
    /// </summary>
    public IDuplexPipe ConnectInProcess()
    {
        var server = Running;
        if (!server.IsReadyForConnections)
        {
            throw new InvalidOperationException("The server is not accepting connections (lame duck mode or shutting down).");
        }
        var (transport, client) = PipeTransport.CreatePair();
        server.AdmitClient(transport);
        return client;
    }

    /// <summary>Completes when the server is ready for clients; faults if starting it failed.</summary>
    public Task WaitUntilReadyAsync(CancellationToken cancellationToken = default) => _ready.Task.WaitAsync(cancellationToken);

    /// <summary>Stops accepting, flushes and closes every client, releases the ports. Safe to call more than once.</summary>
    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        await _lifecycle.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_stopped)
            {
                return;
            }
            _stopped = true;
            _ready.TrySetCanceled(CancellationToken.None);
            if (_server is { } server)
            {
                await server.ShutdownAsync().WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            if (_temporaryStoreDir is { } storeDir)
            {
                _temporaryStoreDir = null;
                Directory.Delete(storeDir, recursive: true);
            }
        }
        finally
        {
            _lifecycle.Release();
        }
    }

    /// <inheritdoc cref="StopAsync(CancellationToken)"/>
    public async ValueTask DisposeAsync() => await StopAsync().ConfigureAwait(false);

    private NatsServer Running => IsReady ? _server! : throw new InvalidOperationException("The server is not running (not started yet, failed to start, or stopped).");

    private static string ConnectHost(string host) => host switch
    {
        "" or "0.0.0.0" or "*" => "127.0.0.1",
        "::" or "[::]" => "[::1]",
        _ when IPAddress.TryParse(host.Trim('[', ']'), out var ip) && ip.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 => $"[{ip}]",
        _ => host,
    };
}
