using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Nats.Server.Hosting;
using Nats.Server.Transport;

namespace Nats.Server.WebSocket;

/// <summary>
/// The <c>websocket {}</c> listener on Kestrel: any path upgrades to NATS over WebSocket (Go's wsUpgrade),
/// after Go's request checks (method, headers, version, origin) answered with Go's status codes and
/// log lines. The upgraded socket is admitted like any client and the request lives as long as it does.
/// </summary>
internal sealed class WebSocketListener(NatsServer server, WebSocketOptions options, ILogger logger) : IAsyncDisposable
{
    private const string NoMaskingHeader = "Nats-No-Masking";
    private const string MqttPath = "/mqtt";
    private const string MqttSubProtocol = "mqtt";
    private const string LeafPath = "/leafnode";

    private readonly OriginPolicy _origins = new(options.SameOrigin, options.AllowedOrigins);
    private WebApplication? _app;

    public int Port { get; private set; }

    public bool Secure => options.TlsContext is not null;

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        var host = string.IsNullOrEmpty(options.Host) ? server.Options.Host : options.Host;
        var address = host is "" or "0.0.0.0" or "*" ? IPAddress.Any : IPAddress.TryParse(host.Trim('[', ']'), out var ip) ? ip : (await Dns.GetHostAddressesAsync(host, cancellationToken).ConfigureAwait(false))[0];
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [], ContentRootPath = AppContext.BaseDirectory });
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton<IHostLifetime, EmbeddedLifetime>();
        builder.Configuration.Sources.Clear();
        // Connection I/O continues on the socket's completion thread instead of hopping through the
        // thread pool: the NATS read loop never blocks, and the hop per read halved WebSocket throughput.
        builder.WebHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = true);
        builder.Services.AddSingleton<Microsoft.AspNetCore.Connections.IMemoryPoolFactory<byte>>(new LargeBlockMemoryPool.Factory());
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            var handshake = options.HandshakeTimeout > TimeSpan.Zero ? options.HandshakeTimeout
                : TimeSpan.FromSeconds(options.Tls?.EffectiveTimeoutSeconds ?? Tls.TlsOptions.DefaultTimeoutSeconds);
            kestrel.Limits.RequestHeadersTimeout = handshake;
            kestrel.Listen(address, options.Port < 0 ? 0 : options.Port, listen =>
            {
                if (options.TlsContext is { } tls)
                {
                    listen.UseHttps(https =>
                    {
                        https.ServerCertificate = tls.Certificate;
                        https.HandshakeTimeout = handshake;
                    });
                }
            });
        });
        var app = builder.Build();
        app.UseWebSockets(new Microsoft.AspNetCore.Builder.WebSocketOptions { KeepAliveInterval = TimeSpan.Zero });
        app.Run(UpgradeAsync);
        try
        {
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (IOException e)
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw new ListenFailedException($"Unable to listen for websocket connections: {ListenFailedException.ListenError(host, options.Port < 0 ? 0 : options.Port, e)}", e);
        }
        _app = app;
        var bound = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        Port = new Uri(bound.Replace("0.0.0.0", "localhost").Replace("[::]", "localhost")).Port;
        logger.LogInformation("Listening for websocket clients on {Scheme}://{Host}:{Port}", Secure ? "wss" : "ws", host, Port);
        if (!Secure)
        {
            logger.LogWarning("Websocket not configured with TLS. DO NOT USE IN PRODUCTION!");
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_app is { } app)
        {
            _app = null;
            await app.StopAsync().ConfigureAwait(false);
            await app.DisposeAsync().ConfigureAwait(false);
        }
    }

    private async Task UpgradeAsync(HttpContext context)
    {
        var request = context.Request;
        var refusal = request.Method != "GET" ? (405, "request method must be GET")
            : string.IsNullOrEmpty(request.Host.Value) ? (400, "'Host' missing in request")
            : !HeaderContains(request, "Upgrade", "websocket") ? (400, "invalid value for header 'Upgrade'")
            : !HeaderContains(request, "Connection", "Upgrade") ? (400, "invalid value for header 'Connection'")
            : string.IsNullOrEmpty(request.Headers["Sec-WebSocket-Key"]) ? (400, "key missing")
            : !HeaderContains(request, "Sec-WebSocket-Version", "13") ? (400, "invalid version")
            : _origins.Check(request) is { } originError ? (403, $"origin not allowed: {originError}")
            : ((int, string)?)null;
        var remote = new IPEndPoint(context.Connection.RemoteIpAddress ?? IPAddress.None, context.Connection.RemotePort);
        if (refusal is var (status, reason))
        {
            logger.LogError("{Remote} - websocket handshake error: {Reason}", FormatRemote(remote), reason);
            context.Response.StatusCode = status;
            context.Response.Headers["Sec-Websocket-Version"] = "13";
            context.Response.ContentType = "text/plain; charset=utf-8";
            await context.Response.WriteAsync(ReasonPhrase(status) + "\n").ConfigureAwait(false);
            return;
        }
        if (IsMqttPath(request))
        {
            await ServeMqttAsync(context, remote).ConfigureAwait(false);
            return;
        }
        if (IsLeafPath(request))
        {
            await ServeLeafAsync(context, remote).ConfigureAwait(false);
            return;
        }
        if (!options.Compression && context.Features.Get<IHttpUpgradeFeature>() is { IsUpgradableRequest: true } upgrade
            && AcceptKey(request.Headers["Sec-WebSocket-Key"].ToString()) is { } accept)
        {
            await ServeFramedAsync(context, upgrade, accept, remote).ConfigureAwait(false);
            return;
        }
        using var socket = await context.WebSockets.AcceptWebSocketAsync(new WebSocketAcceptContext
        {
            DangerousEnableCompression = options.Compression,
            // Go does not ping at the WebSocket level; NATS PING/PONG covers liveness.
            KeepAliveInterval = TimeSpan.Zero,
        }).ConfigureAwait(false);
        var transport = new WebSocketTransport(socket, remote);
        server.AdmitClient(transport);
        // The write loop aborts the transport when the connection ends, whoever ended it.
        await transport.Closed.ConfigureAwait(false);
        await CloseAsync(socket).ConfigureAwait(false);
    }

    private static async Task CloseAsync(System.Net.WebSockets.WebSocket socket)
    {
        if (socket.State is System.Net.WebSockets.WebSocketState.Open or System.Net.WebSockets.WebSocketState.CloseReceived)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
            try
            {
                await socket.CloseOutputAsync(System.Net.WebSockets.WebSocketCloseStatus.NormalClosure, "", timeout.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is System.Net.WebSockets.WebSocketException or OperationCanceledException or IOException or ObjectDisposedException or InvalidOperationException)
            {
            }
        }
        socket.Abort();
    }

    /// <summary>Go's wsUpgrade: a path starting with /mqtt (escaped, as sent) is an MQTT client, whatever subprotocol it asked for.</summary>
    private static bool IsMqttPath(HttpRequest request) =>
        (request.PathBase + request.Path).ToUriComponent().StartsWith(MqttPath, StringComparison.Ordinal);

    /// <summary>Go's wsUpgrade: a path starting with /leafnode is a leaf node connection.</summary>
    private static bool IsLeafPath(HttpRequest request) =>
        (request.PathBase + request.Path).ToUriComponent().StartsWith(LeafPath, StringComparison.Ordinal);

    /// <summary>
    /// A leaf over WebSocket (Go's createLeafNode with a websocket): the SDK's WebSocket under a leaf connection, which
    /// then goes as over the leaf port (INFO, CONNECT, no TLS upgrade: the HTTPS of the upgrade is its TLS). Go needs the
    /// leaf port configured and otherwise closes the upgraded connection at once with its error line.
    /// </summary>
    private async Task ServeLeafAsync(HttpContext context, IPEndPoint remote)
    {
        using var socket = await context.WebSockets.AcceptWebSocketAsync(new WebSocketAcceptContext
        {
            DangerousEnableCompression = options.Compression,
            KeepAliveInterval = TimeSpan.Zero,
        }).ConfigureAwait(false);
        if (server.LeafNodes is not { Options.Listens: true } leafs)
        {
            logger.LogError("Not configured to accept leaf node connections");
            socket.Abort();
            return;
        }
        var transport = new WebSocketTransport(socket, remote);
        leafs.StartConnection(transport, remote, null, null);
        await transport.Closed.ConfigureAwait(false);
        await CloseAsync(socket).ConfigureAwait(false);
    }

    /// <summary>
    /// MQTT over WebSocket (Go's createMQTTClient with a websocket): the SDK's WebSocket (masking,
    /// fragments, control frames, permessage-deflate when the block enables it) in the
    /// <see cref="WebSocketTransport"/> a NATS client gets, admitted by the same door as an MQTT
    /// connection; the 101 answer names the mqtt subprotocol as Go's does.
    /// </summary>
    private async Task ServeMqttAsync(HttpContext context, IPEndPoint remote)
    {
        if (server.Mqtt is not { } mqtt)
        {
            // Go 2.9.10 upgrades and then panics on the CONNECT (nil MQTT session manager); we refuse the upgrade instead.
            logger.LogError("{Remote} - websocket handshake error: {Reason}", FormatRemote(remote), "MQTT is not configured on this server");
            context.Response.StatusCode = 400;
            context.Response.ContentType = "text/plain; charset=utf-8";
            await context.Response.WriteAsync(ReasonPhrase(400) + "\n").ConfigureAwait(false);
            return;
        }
        using var socket = await context.WebSockets.AcceptWebSocketAsync(new WebSocketAcceptContext
        {
            SubProtocol = MqttSubProtocol,
            DangerousEnableCompression = options.Compression,
            // MQTT's PINGREQ and keep-alive cover liveness, as in Go.
            KeepAliveInterval = TimeSpan.Zero,
        }).ConfigureAwait(false);
        // Each outbound batch goes out as one binary message; MQTT packets may cross message boundaries.
        var transport = new WebSocketTransport(socket, remote);
        server.AdmitMqtt(transport, mqtt);
        await transport.Closed.ConfigureAwait(false);
        await CloseAsync(socket).ConfigureAwait(false);
    }

    /// <summary>
    /// Without compression the frames are ours to read and write (WebSocketStreamTransport): the same
    /// 101 answer the SDK's middleware gives, then the raw upgraded stream.
    /// </summary>
    private async Task ServeFramedAsync(HttpContext context, IHttpUpgradeFeature upgrade, string accept, IPEndPoint remote)
    {
        var headers = context.Response.Headers;
        headers.Connection = "Upgrade";
        headers.Upgrade = "websocket";
        headers.SecWebSocketAccept = accept;
        // Go's wsUpgrade: a client that asks (first value exactly "true") may send unmasked frames; the answer says so.
        var noMasking = context.Request.Headers[NoMaskingHeader].FirstOrDefault() == "true";
        if (noMasking)
        {
            headers[NoMaskingHeader] = "true";
        }
        var stream = await upgrade.UpgradeAsync().ConfigureAwait(false);
        var transport = new WebSocketStreamTransport(stream, remote, clientMasks: !noMasking);
        server.AdmitClient(transport);
        // The write loop aborts the transport when the connection ends, whoever ended it.
        await transport.Closed.ConfigureAwait(false);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        try
        {
            await transport.CloseAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or ObjectDisposedException or InvalidOperationException)
        {
        }
    }

    /// <summary>RFC 6455's Sec-WebSocket-Accept for a well-formed key (16 bytes in base64); null otherwise.</summary>
    private static string? AcceptKey(string key)
    {
        Span<byte> decoded = stackalloc byte[24];
        if (!Convert.TryFromBase64String(key.Trim(), decoded, out var length) || length != 16)
        {
            return null;
        }
        var hash = System.Security.Cryptography.SHA1.HashData(System.Text.Encoding.ASCII.GetBytes(key.Trim() + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"));
        return Convert.ToBase64String(hash);
    }

    private static string FormatRemote(IPEndPoint remote) =>
        remote.Address.IsIPv4MappedToIPv6 ? $"{remote.Address.MapToIPv4()}:{remote.Port}" : remote.ToString();

    /// <summary>Go's wsHeaderContains: a comma-separated header value holds the token, case-insensitively.</summary>
    private static bool HeaderContains(HttpRequest request, string name, string value) =>
        request.Headers[name].Any(h => h is not null && h.Split(',').Any(t => string.Equals(t.Trim(), value, StringComparison.OrdinalIgnoreCase)));

    private static string ReasonPhrase(int status) => status switch
    {
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        _ => "Error",
    };

    private sealed class EmbeddedLifetime : IHostLifetime
    {
        public Task WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
