namespace Nats.Server.Monitoring.Metrics;

/// <summary>
/// One family group of /metrics (varz, accounts, subsz, healthz, JetStream): it creates its gauges in a
/// registry once and refreshes their values from the server right before each scrape.
/// </summary>
internal interface IMetricsSet
{
    void Update();
}
