using System.Net;
using System.Text;
using System.Text.Json.Serialization.Metadata;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Nats.Server.Hosting;
using Nats.Server.Monitoring.Metrics;

namespace Nats.Server.Monitoring;

/// <summary>
/// The HTTP monitoring port (nats-server -m / http_port) on Kestrel. Paths, query parameters,
/// status codes, 400 texts, JSONP callbacks and request counting follow the Go server.
/// </summary>
internal sealed class MonitoringServer : IAsyncDisposable
{
    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly RequestStats _requestStats;
    private readonly ServerDocuments _documents;
    private readonly Lazy<ServerMetrics> _metrics;
    private WebApplication? _app;

    public MonitoringServer(NatsServer server, ILoggerFactory loggerFactory)
    {
        _server = server;
        _logger = loggerFactory.CreateLogger("nats-server");
        _requestStats = server.HttpRequestStats;
        _documents = server.Documents;
        _metrics = new Lazy<ServerMetrics>(() => new ServerMetrics(server));
    }

    public int Port { get; private set; }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        var options = _server.Options;
        var host = string.IsNullOrEmpty(options.HttpHost) ? options.Host : options.HttpHost;
        var address = ResolveAddress(host);
        var secure = options.HttpsPort != 0;
        var configured = secure ? options.HttpsPort : options.HttpPort;
        var port = configured < 0 ? 0 : configured;
        var certificate = options.TlsContext?.Certificate;
        if (secure && options.HttpPort != 0)
        {
            throw new InvalidOperationException($"can't specify both HTTP ({options.HttpPort}) and HTTPs ({options.HttpsPort}) ports");
        }
        if (secure && certificate is null)
        {
            throw new InvalidOperationException("TLS cert and key required for HTTPS");
        }

        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
        {
            Args = [],
            ContentRootPath = AppContext.BaseDirectory,
        });
        // Kestrel's own logging would interleave with the Go-style server log; failures surface as exceptions.
        builder.Logging.ClearProviders();
        // An embedded host must not take over the process's Ctrl+C/SIGTERM handling (the default
        // console lifetime would), nor watch appsettings files: the NATS server owns both.
        builder.Services.AddSingleton<IHostLifetime, EmbeddedLifetime>();
        builder.Configuration.Sources.Clear();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            kestrel.Listen(address, port, listen =>
            {
                if (secure)
                {
                    // https uses the client port's tls {} certificate, as Go's StartMonitoring does.
                    listen.UseHttps(certificate!);
                }
            });
        });
        var app = builder.Build();
        MapEndpoints(app);
        try
        {
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (IOException e)
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw new ListenFailedException($"Can't start monitoring: can't listen to the monitor port: {ListenFailedException.ListenError(host, port, e)}", e);
        }
        _app = app;

        var bound = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        Port = new Uri(bound).Port;
        _logger.LogInformation("Starting {Scheme} monitor on {Host}:{Port}", secure ? "https" : "http", host.Contains(':') ? $"[{host}]" : host, Port);
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

    private void MapEndpoints(WebApplication app)
    {
        app.Map(Path("/"), context =>
        {
            _requestStats.Increment("/");
            context.Response.ContentType = "text/html; charset=utf-8";
            return context.Response.WriteAsync(IndexPage.Render(NatsServer.FeatureLevelVersion));
        });
        app.Map(Path("/varz"), context => Handle(context, "/varz", _ => Json(_documents.Varz(), MonitorJsonContext.Indented.Varz)));
        // Go counts /connz and /routez only once their parameters decoded.
        app.Map(Path("/connz"), context => Handle(context, null, Connz));
        app.Map(Path("/subsz"), context => Handle(context, "/subsz", Subsz));
        app.Map(Path("/subscriptionsz"), context => Handle(context, "/subsz", Subsz));
        app.Map(Path("/routez"), context => Handle(context, null, query =>
        {
            var detail = query.Get("subs").Equals("detail", StringComparison.OrdinalIgnoreCase);
            var subs = false;
            if (!detail && !query.TryBool("subs", out subs, out var error))
            {
                return BadRequest(error);
            }
            _requestStats.Increment("/routez");
            return Json(_documents.Routez(subs, detail), MonitorJsonContext.Indented.Routez);
        }));
        app.Map(Path("/gatewayz"), context => Handle(context, "/gatewayz", query =>
            query.TryBool("accs", out var accs, out var error)
                ? Json(_documents.Gatewayz(accs, query.Get("gw_name"), query.Get("acc_name")), MonitorJsonContext.Indented.Gatewayz)
                : BadRequest(error)));
        app.Map(Path("/leafz"), context => Handle(context, "/leafz", query =>
            query.TryBool("subs", out var subs, out var error) ? Json(_documents.Leafz(subs, query.Get("acc")), MonitorJsonContext.Indented.Leafz) : BadRequest(error)));
        app.Map(Path("/accountz"), context => Handle(context, "/accountz", query =>
            _documents.Accountz(query.Get("acc"), out var error) is { } doc ? Json(doc, MonitorJsonContext.Indented.Accountz) : BadRequest(error)));
        app.Map(Path("/accstatz"), context => Handle(context, "/accstatz", query =>
            query.TryBool("unused", out var unused, out var error)
                ? Json(_documents.AccountStatz(unused), MonitorJsonContext.Indented.AccountStatz)
                : BadRequest(error)));
        app.Map(Path("/jsz"), context => Handle(context, "/jsz", Jsz));
        app.Map(Path("/healthz"), context => Handle(context, "/healthz", Healthz));
        // Not in Go (it needs prometheus-nats-exporter); left out of http_req_stats so /varz stays Go's.
        app.Map(Path("/metrics"), Metrics);
        app.MapFallback(context =>
        {
            // Go's mux answers unknown paths with http.NotFound.
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.ContentType = "text/plain; charset=utf-8";
            return context.Response.WriteAsync("404 page not found\n");
        });
    }

    /// <summary>Go's basePath: path.Join of the normalised http_base_path and the endpoint.</summary>
    private string Path(string endpoint) => JoinPath(NormalizeBasePath(_server.Options.HttpBasePath), endpoint);

    /// <summary>Go's normalizeBasePath: "/" when empty, a leading slash added, then path.Clean.</summary>
    internal static string NormalizeBasePath(string? basePath)
    {
        if (string.IsNullOrEmpty(basePath))
        {
            return "/";
        }
        return CleanPath(basePath[0] == '/' ? basePath : "/" + basePath);
    }

    internal static string JoinPath(string basePath, string endpoint) => CleanPath(basePath + "/" + endpoint);

    /// <summary>path.Clean for rooted paths: collapses slashes, "." and "..", and drops a trailing slash.</summary>
    private static string CleanPath(string path)
    {
        var parts = new List<string>();
        foreach (var part in path.Split('/'))
        {
            if (part.Length == 0 || part == ".")
            {
                continue;
            }
            if (part == "..")
            {
                if (parts.Count > 0)
                {
                    parts.RemoveAt(parts.Count - 1);
                }
                continue;
            }
            parts.Add(part);
        }
        return "/" + string.Join('/', parts);
    }

    private async Task Metrics(HttpContext context)
    {
        var openMetrics = ServerMetrics.WantsOpenMetrics(context.Request.Headers.Accept);
        context.Response.ContentType = openMetrics ? ServerMetrics.OpenMetricsContentType : ServerMetrics.PrometheusContentType;
        await _metrics.Value.WriteAsync(context.Response.Body, openMetrics, context.RequestAborted).ConfigureAwait(false);
    }

    private Response Connz(QueryDecoder query)
    {
        var sort = query.Get("sort");
        if (!query.TryBool("auth", out var auth, out var error))
        {
            return BadRequest(error);
        }
        var subsDetail = query.Get("subs").Equals("detail", StringComparison.OrdinalIgnoreCase);
        var subs = false;
        if (!subsDetail && !query.TryBool("subs", out subs, out error))
        {
            return BadRequest(error);
        }
        if (!query.TryInt("offset", out var offset, out error)
            || !query.TryInt("limit", out var limit, out error)
            || !query.TryUInt64("cid", out var cid, out error))
        {
            return BadRequest(error);
        }
        var stateText = query.Get("state");
        ConnState state;
        switch (stateText.ToLowerInvariant())
        {
            case "" or "open":
                state = ConnState.Open;
                break;
            case "closed":
                state = ConnState.Closed;
                break;
            case "any" or "all":
                state = ConnState.Any;
                break;
            default:
                return BadRequest($"Error decoding state for {stateText}");
        }
        _requestStats.Increment("/connz");
        var options = new ConnzOptions(sort, auth, subs, subsDetail, offset, limit, cid, state, query.Get("user"), query.Get("acc"));
        return ConnzBuilder.Build(_server, options, out error) is { } connz
            ? Json(connz, MonitorJsonContext.Indented.Connz)
            : BadRequest(error);
    }

    private Response Subsz(QueryDecoder query)
    {
        if (!query.TryBool("subs", out var subs, out var error)
            || !query.TryInt("offset", out var offset, out error)
            || !query.TryInt("limit", out var limit, out error))
        {
            return BadRequest(error);
        }
        var document = _documents.Subsz(subs, offset, limit, query.Get("test"), query.Get("acc"), out error);
        return document switch
        {
            Subsz full => Json(full, MonitorJsonContext.Indented.Subsz),
            SubListStatsModel stats => Json(stats, MonitorJsonContext.Indented.SubListStatsModel),
            _ => BadRequest(error),
        };
    }

    private Response Jsz(QueryDecoder query)
    {
        foreach (var flag in new[] { "accounts", "streams", "consumers", "config" })
        {
            if (!query.TryBool(flag, out _, out var flagError))
            {
                return BadRequest(flagError);
            }
        }
        if (!query.TryInt("offset", out _, out var error)
            || !query.TryInt("limit", out _, out error)
            || !query.TryBool("leader-only", out var leaderOnly, out error))
        {
            return BadRequest(error);
        }
        return _documents.Jsz(leaderOnly, out error) is { } jsz ? Json(jsz, MonitorJsonContext.Indented.Jsz) : BadRequest(error);
    }

    private Response Healthz(QueryDecoder query)
    {
        foreach (var flag in new[] { "js-enabled", "js-enabled-only", "js-server-only" })
        {
            if (!query.TryBool(flag, out _, out var error))
            {
                return BadRequest(error);
            }
        }
        var health = _documents.Healthz();
        var status = health.Error is null ? StatusCodes.Status200OK : StatusCodes.Status503ServiceUnavailable;
        if (health.Error is not null)
        {
            _logger.LogWarning("Healthcheck failed: \"{Error}\"", health.Error);
        }
        return Json(health, MonitorJsonContext.Compact.HealthStatus) with { Status = status };
    }

    private async Task Handle(HttpContext context, string? statsPath, Func<QueryDecoder, Response> build)
    {
        if (statsPath is not null)
        {
            _requestStats.Increment(statsPath);
        }
        var query = new QueryDecoder(context.Request.Query);
        var response = build(query);
        context.Response.StatusCode = response.Status;
        if (response.IsJson)
        {
            var callback = query.Get("callback");
            if (callback.Length > 0)
            {
                // JSONP, as Go's ResponseHandler does.
                context.Response.ContentType = "application/javascript";
                await context.Response.WriteAsync(callback + "(").ConfigureAwait(false);
                await context.Response.Body.WriteAsync(response.Body).ConfigureAwait(false);
                await context.Response.WriteAsync(")").ConfigureAwait(false);
                return;
            }
            context.Response.ContentType = "application/json";
        }
        else
        {
            context.Response.ContentType = "text/plain; charset=utf-8";
        }
        context.Response.ContentLength = response.Body.Length;
        await context.Response.Body.WriteAsync(response.Body).ConfigureAwait(false);
    }

    private static Response Json<T>(T document, JsonTypeInfo<T> typeInfo) =>
        new(StatusCodes.Status200OK, true, System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(document, typeInfo));

    private static Response BadRequest(string text) => new(StatusCodes.Status400BadRequest, false, Encoding.UTF8.GetBytes(text));

    private static IPAddress ResolveAddress(string host)
    {
        if (string.IsNullOrEmpty(host) || host is "0.0.0.0" or "*")
        {
            return IPAddress.Any;
        }
        if (host is "::" or "[::]")
        {
            return IPAddress.IPv6Any;
        }
        return IPAddress.TryParse(host.Trim('[', ']'), out var address) ? address : Dns.GetHostAddresses(host).First();
    }

    private readonly record struct Response(int Status, bool IsJson, byte[] Body);

    private sealed class EmbeddedLifetime : IHostLifetime
    {
        public Task WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
