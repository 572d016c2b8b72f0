using Prometheus;

namespace Nats.Server.Monitoring.Metrics;

/// <summary>
/// The /jsz server totals, named as prometheus-nats-exporter's -jsz collector names its server
/// metrics (jetstream_server_*), labelled by server_id like the other sets. jetstream_server_jetstream_disabled
/// is 1 when JetStream is off, and every other value is 0 then.
/// </summary>
internal sealed class JetStreamMetrics : IMetricsSet
{
    private const string Prefix = "jetstream_server_";

    private readonly Func<Jsz?> _jsz;
    private readonly (Gauge.Child Gauge, Func<Jsz, double> Read)[] _fields;

    public JetStreamMetrics(IMetricFactory factory, string serverId, Func<Jsz?> jsz)
    {
        _jsz = jsz;
        (Gauge.Child, Func<Jsz, double>) Field(string key, string help, Func<Jsz, double> read) =>
            (factory.CreateGauge(Prefix + key, help, ["server_id"]).WithLabels(serverId), read);
        _fields =
        [
            Field("jetstream_disabled", "1 when JetStream is not enabled", j => j.Disabled ? 1 : 0),
            Field("max_memory", "Memory limit for JetStream storage (bytes)", j => j.Config.MaxMemory),
            Field("max_storage", "File limit for JetStream storage (bytes)", j => j.Config.MaxStorage),
            Field("total_memory", "Memory used by JetStream streams (bytes)", j => j.Memory),
            Field("total_storage", "File storage used by JetStream streams (bytes)", j => j.Storage),
            Field("total_accounts", "Accounts with JetStream enabled", j => j.Accounts),
            Field("total_streams", "Streams", j => j.Streams),
            Field("total_consumers", "Consumers", j => j.Consumers),
            Field("total_messages", "Messages stored in all streams", j => j.Messages),
            Field("total_message_bytes", "Bytes stored in all streams", j => j.Bytes),
            Field("api_requests", "JetStream API requests served", j => j.Api.Total),
            Field("api_errors", "JetStream API requests answered with an error", j => j.Api.Errors),
        ];
    }

    public void Update()
    {
        if (_jsz() is not { } jsz)
        {
            return;
        }
        foreach (var (gauge, read) in _fields)
        {
            gauge.Set(read(jsz));
        }
    }
}
