using Prometheus;

namespace Nats.Server.Monitoring.Metrics;

/// <summary>
/// The /metrics endpoint's registry: a private prometheus-net registry (no process-wide default
/// metrics leak in, two embedded servers in one process do not collide) holding the metric sets.
/// A subsystem adds one <see cref="IMetricsSet"/> to the list below.
/// </summary>
internal sealed class ServerMetrics
{
    public const string OpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    public const string PrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

    private readonly CollectorRegistry _registry = Prometheus.Metrics.NewCustomRegistry();
    private readonly SemaphoreSlim _scrape = new(1, 1);

    public ServerMetrics(Hosting.NatsServer server)
    {
        var factory = Prometheus.Metrics.WithCustomRegistry(_registry);
        var documents = server.Documents;
        IMetricsSet[] sets =
        [
            new VarzMetrics(factory, server.ServerId, documents.Varz),
            new AccountMetrics(factory, server.ServerId, () => documents.AccountStatz(includeUnused: true), server.FindAccount),
            new SubszMetrics(factory, server.ServerId, () => documents.SubszDocument(false, 0, 0, "", "", out _)!.Stats),
            new HealthzMetrics(factory, server.ServerId, documents.Healthz),
            new JetStreamMetrics(factory, server.ServerId, () => documents.Jsz(leaderOnly: false, out _)),
        ];
        _registry.AddBeforeCollectCallback(() =>
        {
            foreach (var set in sets)
            {
                set.Update();
            }
        });
    }

    /// <summary>Writes one scrape; OpenMetrics when the scraper asks for it, else the classic 0.0.4 text.</summary>
    public async Task WriteAsync(Stream output, bool openMetrics, CancellationToken cancellationToken)
    {
        // One scrape at a time: the update callbacks and the export then see one consistent set of values.
        await _scrape.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var format = openMetrics ? ExpositionFormat.OpenMetricsText : ExpositionFormat.PrometheusText;
            await _registry.CollectAndExportAsTextAsync(output, format, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _scrape.Release();
        }
    }

    /// <summary>Prometheus asks with "Accept: application/openmetrics-text; version=1.0.0,...".</summary>
    public static bool WantsOpenMetrics(string? accept) =>
        accept is not null && accept.Contains("application/openmetrics-text", StringComparison.OrdinalIgnoreCase);
}
