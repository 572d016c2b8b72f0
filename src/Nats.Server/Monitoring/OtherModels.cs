using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>/routez (Go's Routez): the routes in force, an empty list without a cluster.</summary>
internal sealed class Routez
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("num_routes")] public int NumRoutes { get; set; }
    [JsonPropertyName("routes")] public List<RoutezRoute> Routes { get; set; } = [];
}

/// <summary>One route in /routez (Go's RouteInfo in monitor.go), in its field order.</summary>
internal sealed class RoutezRoute
{
    [JsonPropertyName("rid")] public ulong Rid { get; set; }
    [JsonPropertyName("remote_id")] public string RemoteId { get; set; } = "";
    [JsonPropertyName("did_solicit")] public bool DidSolicit { get; set; }
    [JsonPropertyName("is_configured")] public bool IsConfigured { get; set; }
    [JsonPropertyName("ip")] public string Ip { get; set; } = "";
    [JsonPropertyName("port")] public int Port { get; set; }
    [JsonPropertyName("start")] public DateTime Start { get; set; }
    [JsonPropertyName("last_activity")] public DateTime LastActivity { get; set; }
    [JsonPropertyName("rtt"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Rtt { get; set; }
    [JsonPropertyName("uptime")] public string Uptime { get; set; } = "";
    [JsonPropertyName("idle")] public string Idle { get; set; } = "";
    [JsonPropertyName("pending_size")] public int Pending { get; set; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; set; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; set; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; set; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; set; }
    [JsonPropertyName("subscriptions")] public int NumSubs { get; set; }
    [JsonPropertyName("subscriptions_list"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Subs { get; set; }
    [JsonPropertyName("subscriptions_list_detail"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<SubDetail>? SubsDetail { get; set; }
}


/// <summary>/leafz (Go's Leafz): with no leaf connections Go leaves the list nil, so it is written as null.</summary>
internal sealed class Leafz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("leafnodes")] public int NumLeafs { get; set; }
    [JsonPropertyName("leafs")] public List<LeafzEntry>? Leafs { get; set; }
}

/// <summary>One leaf connection in /leafz (Go's LeafInfo, 2.9.10).</summary>
internal sealed class LeafzEntry
{
    [JsonPropertyName("account")] public string Account { get; set; } = "";
    [JsonPropertyName("ip")] public string Ip { get; set; } = "";
    [JsonPropertyName("port")] public int Port { get; set; }
    [JsonPropertyName("rtt"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Rtt { get; set; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; set; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; set; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; set; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; set; }
    [JsonPropertyName("subscriptions")] public int NumSubs { get; set; }
    [JsonPropertyName("subscriptions_list"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Subs { get; set; }
}

internal sealed class Accountz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("system_account"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? SystemAccount { get; set; }
    [JsonPropertyName("accounts"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Accounts { get; set; }
    [JsonPropertyName("account_detail"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public AccountInfo? AccountDetail { get; set; }
}

/// <summary>AccountInfo in monitor.go, for accounts without JWTs, imports or exports.</summary>
internal sealed class AccountInfo
{
    [JsonPropertyName("account_name")] public string AccountName { get; set; } = "";
    [JsonPropertyName("update_time")] public DateTime UpdateTime { get; set; }
    [JsonPropertyName("is_system"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool IsSystem { get; set; }
    [JsonPropertyName("expired")] public bool Expired { get; set; }
    [JsonPropertyName("complete")] public bool Complete { get; set; } = true;
    [JsonPropertyName("jetstream_enabled")] public bool JetStreamEnabled { get; set; }
    [JsonPropertyName("leafnode_connections")] public int LeafnodeConnections { get; set; }
    [JsonPropertyName("client_connections")] public int ClientConnections { get; set; }
    [JsonPropertyName("subscriptions")] public long Subscriptions { get; set; }
    [JsonPropertyName("mappings"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public SortedDictionary<string, List<MapDestModel>>? Mappings { get; set; }
    [JsonPropertyName("exports"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<ExtExport>? Exports { get; set; }
    [JsonPropertyName("imports"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<ExtImport>? Imports { get; set; }
    [JsonPropertyName("sublist_stats")] public SubListStatsModel SublistStats { get; set; } = new();
    [JsonPropertyName("responses"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public Dictionary<string, ExtResponse>? Responses { get; set; }
}

/// <summary>Go's ExtExport: jwt.Export (the fields the server fills) plus the approved accounts.</summary>
internal sealed class ExtExport
{
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("token_req"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TokenRequired { get; set; }
    [JsonPropertyName("response_type"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? ResponseType { get; set; }
    [JsonPropertyName("service_latency"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ExtServiceLatency? Latency { get; set; }
    [JsonPropertyName("approved_accounts"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? ApprovedAccounts { get; set; }
}

internal sealed class ExtServiceLatency
{
    [JsonPropertyName("sampling")] public int Sampling { get; set; }
    [JsonPropertyName("results")] public string Results { get; set; } = "";
}

/// <summary>Go's ExtImport: jwt.Import plus invalid/share/tracking.</summary>
internal sealed class ExtImport
{
    [JsonPropertyName("subject"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Subject { get; set; }
    [JsonPropertyName("account"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; set; }
    [JsonPropertyName("to"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? To { get; set; }
    [JsonPropertyName("local_subject"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? LocalSubject { get; set; }
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("invalid")] public bool Invalid { get; set; }
    [JsonPropertyName("share")] public bool Share { get; set; }
    [JsonPropertyName("tracking")] public bool Tracking { get; set; }
}

/// <summary>MapDest in accounts.go: a destination with its cumulative weight, as /accountz lists mappings.</summary>
internal sealed class MapDestModel
{
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("weight")] public int Weight { get; set; }
    [JsonPropertyName("cluster"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Cluster { get; set; }
}

internal sealed class AccountStatz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("account_statz")] public List<AccountStat> Accounts { get; set; } = [];
}

/// <summary>AccountStat in events.go.</summary>
internal sealed class AccountStat
{
    [JsonPropertyName("acc")] public string Account { get; set; } = "";
    [JsonPropertyName("conns")] public int Conns { get; set; }
    [JsonPropertyName("leafnodes")] public int LeafNodes { get; set; }
    [JsonPropertyName("total_conns")] public int TotalConns { get; set; }
    [JsonPropertyName("sent")] public DataStats Sent { get; set; } = new();
    [JsonPropertyName("received")] public DataStats Received { get; set; } = new();
    [JsonPropertyName("slow_consumers")] public long SlowConsumers { get; set; }
}

internal sealed class DataStats
{
    [JsonPropertyName("msgs")] public long Msgs { get; set; }
    [JsonPropertyName("bytes")] public long Bytes { get; set; }
}

/// <summary>/jsz (JSInfo in monitor.go): the server totals; "disabled" when JetStream is off.</summary>
internal sealed class Jsz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("disabled"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Disabled { get; set; }
    [JsonPropertyName("config")] public JetStreamConfigModel Config { get; set; } = new();
    [JsonPropertyName("memory")] public ulong Memory { get; set; }
    [JsonPropertyName("storage")] public ulong Storage { get; set; }
    [JsonPropertyName("reserved_memory")] public ulong ReservedMemory { get; set; }
    [JsonPropertyName("reserved_storage")] public ulong ReservedStorage { get; set; }
    [JsonPropertyName("accounts")] public int Accounts { get; set; }
    [JsonPropertyName("ha_assets")] public int HaAssets { get; set; }
    [JsonPropertyName("api")] public JetStreamApiStats Api { get; set; } = new();
    [JsonPropertyName("streams")] public int Streams { get; set; }
    [JsonPropertyName("consumers")] public int Consumers { get; set; }
    [JsonPropertyName("messages")] public ulong Messages { get; set; }
    [JsonPropertyName("bytes")] public ulong Bytes { get; set; }
    [JsonPropertyName("meta_cluster"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public MetaClusterInfo? Meta { get; set; }

    /// <summary>Ours, not Go's: damage the stores found (absent while there is none).</summary>
    [JsonPropertyName("store_damage"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public StoreDamageStats? StoreDamage { get; set; }
}

internal sealed class StoreDamageStats
{
    [JsonPropertyName("events")] public ulong Events { get; set; }
    [JsonPropertyName("lost_msgs")] public ulong LostMessages { get; set; }
    [JsonPropertyName("lost_bytes")] public ulong LostBytes { get; set; }

    /// <summary>Stores whose write or fsync failed (they refuse new messages until reloaded).</summary>
    [JsonPropertyName("store_failures")] public ulong StoreFailures { get; set; }
}

internal sealed class JetStreamConfigModel
{
    [JsonPropertyName("max_memory")] public long MaxMemory { get; set; }
    [JsonPropertyName("max_storage")] public long MaxStorage { get; set; }
    [JsonPropertyName("store_dir"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? StoreDir { get; set; }
    [JsonPropertyName("domain"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

internal sealed class JetStreamApiStats
{
    [JsonPropertyName("total")] public ulong Total { get; set; }
    [JsonPropertyName("errors")] public ulong Errors { get; set; }
}

internal sealed class HealthStatus
{
    [JsonPropertyName("status")] public string Status { get; set; } = "ok";
    [JsonPropertyName("error"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Error { get; set; }
}

/// <summary>
/// A pending response mapping in /accountz. Go encodes these ExtImports from a map, where jwt's
/// pointer-receiver MarshalJSON of the import type is not used, so the type shows as its number (2).
/// </summary>
internal sealed class ExtResponse
{
    public const int ServiceTypeNumber = 2;

    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("account")] public string Account { get; set; } = "";
    [JsonPropertyName("to")] public string To { get; set; } = "";
    [JsonPropertyName("type")] public int Type { get; set; } = ServiceTypeNumber;
    [JsonPropertyName("invalid")] public bool Invalid { get; set; }
    [JsonPropertyName("share")] public bool Share { get; set; }
    [JsonPropertyName("tracking")] public bool Tracking { get; set; }
}
