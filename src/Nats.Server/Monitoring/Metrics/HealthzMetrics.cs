using Prometheus;

namespace Nats.Server.Monitoring.Metrics;

/// <summary>/healthz as the exporter's healthz collector reports it: gnatsd_healthz_status{server_id}, 0 when "ok", 1 otherwise.</summary>
internal sealed class HealthzMetrics(IMetricFactory factory, string serverId, Func<HealthStatus> health) : IMetricsSet
{
    private readonly Gauge.Child _status = factory
        .CreateGauge("gnatsd_healthz_status", "0 when /healthz answers ok, 1 when it fails (lame duck, shutting down)", ["server_id"])
        .WithLabels(serverId);

    public void Update() => _status.Set(health().Status == "ok" ? 0 : 1);
}
