using System.Text.Json;
using Nats.Server.Hosting;
using Nats.Server.JetStream;
using Nats.Server.Monitoring;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// Go's JetStreamVarz as sendStatsz fills it: the configuration without the store directory, the usage
/// figures, and the meta group as this server sees it. Taken when the statsz is sent, so peers that place
/// streams by it (Go's nodeToInfo) see current figures.
/// </summary>
internal sealed class StatszJetStream
{
    // Go's defaultMetaGroupName: a follower names the group, only the leader the cluster.
    private const string MetaGroupName = "_meta_";

    private readonly JetStreamTotals _totals;
    private readonly string? _domain;
    private readonly bool _compressOk;
    private readonly int _haAssets;
    private readonly MetaClusterInfo? _meta;

    private StatszJetStream(JetStreamTotals totals, string? domain, bool compressOk, int haAssets, MetaClusterInfo? meta)
    {
        _totals = totals;
        _domain = domain;
        _compressOk = compressOk;
        _haAssets = haAssets;
        _meta = meta;
    }

    public static StatszJetStream? Capture(JetStreamService? js)
    {
        if (js is null)
        {
            return null;
        }
        var meta = js.Meta;
        MetaClusterInfo? info = null;
        if (meta is not null)
        {
            info = meta.Info();
            if (info.Replicas is null)
            {
                // Go's non-leader branch: the group's name and the leader's hash even when no leader is known.
                info.Name = MetaGroupName;
                info.Peer = NameHash.Of(info.Leader ?? "");
            }
        }
        // Go builds a new configuration, without compress_ok, unless both limits were given (EnableJetStream).
        var compressOk = js.Options.MaxMemory > 0 && js.Options.MaxStore > 0;
        return new StatszJetStream(js.Totals(), string.IsNullOrEmpty(js.Options.Domain) ? null : js.Options.Domain, compressOk, js.RaftGroups, info);
    }

    public void Write(Utf8JsonWriter json)
    {
        json.WriteStartObject("jetstream");
        json.WriteStartObject("config");
        json.WriteNumber("max_memory", _totals.MaxMemory);
        json.WriteNumber("max_storage", _totals.MaxStore);
        if (_domain is not null)
        {
            json.WriteString("domain", _domain);
        }
        if (_compressOk)
        {
            json.WriteBoolean("compress_ok", true);
        }
        json.WriteEndObject();
        json.WriteStartObject("stats");
        json.WriteNumber("memory", _totals.Memory);
        json.WriteNumber("storage", _totals.Storage);
        json.WriteNumber("reserved_memory", 0);
        json.WriteNumber("reserved_storage", 0);
        json.WriteNumber("accounts", _totals.Accounts);
        json.WriteNumber("ha_assets", _haAssets);
        json.WriteStartObject("api");
        json.WriteNumber("total", _totals.ApiTotal);
        json.WriteNumber("errors", _totals.ApiErrors);
        json.WriteEndObject();
        json.WriteEndObject();
        if (_meta is not null)
        {
            json.WritePropertyName("meta");
            JsonSerializer.Serialize(json, _meta, MonitorJsonContext.Compact.MetaClusterInfo);
        }
        json.WriteEndObject();
    }
}
