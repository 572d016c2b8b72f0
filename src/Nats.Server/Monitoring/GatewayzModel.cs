using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>/gatewayz (Go's Gatewayz): with gateways off only the id, the time and two empty maps.</summary>
internal sealed class Gatewayz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
    [JsonPropertyName("host"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; set; }
    [JsonPropertyName("port"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; set; }
    [JsonPropertyName("outbound_gateways")] public Dictionary<string, RemoteGatewayz>? OutboundGateways { get; set; } = [];
    [JsonPropertyName("inbound_gateways")] public Dictionary<string, List<RemoteGatewayz>> InboundGateways { get; set; } = [];
}

/// <summary>One gateway connection (Go's RemoteGatewayz).</summary>
internal sealed class RemoteGatewayz
{
    [JsonPropertyName("configured")] public bool IsConfigured { get; set; }
    [JsonPropertyName("connection"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public GatewayConnInfo? Connection { get; set; }
    [JsonPropertyName("accounts"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<AccountGatewayz>? Accounts { get; set; }
}

/// <summary>Go's ConnInfo as fill() leaves it for a gateway connection (kind "Gateway", no type, the peer's server id as name).</summary>
internal sealed class GatewayConnInfo
{
    [JsonPropertyName("cid")] public ulong Cid { get; set; }
    [JsonPropertyName("kind")] public string Kind { get; set; } = "Gateway";
    [JsonPropertyName("ip")] public string Ip { get; set; } = "";
    [JsonPropertyName("port")] public int Port { get; set; }
    [JsonPropertyName("start")] public DateTime Start { get; set; }
    [JsonPropertyName("last_activity")] public DateTime LastActivity { get; set; }
    [JsonPropertyName("rtt")] public string Rtt { get; set; } = "";
    [JsonPropertyName("uptime")] public string Uptime { get; set; } = "";
    [JsonPropertyName("idle")] public string Idle { get; set; } = "";
    [JsonPropertyName("pending_bytes")] public long PendingBytes { get; set; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; set; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; set; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; set; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; set; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; set; }
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
}

/// <summary>One account's interest mode on a gateway connection (Go's AccountGatewayz).</summary>
internal sealed class AccountGatewayz
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("interest_mode")] public string InterestMode { get; set; } = "";
    [JsonPropertyName("no_interest_count"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int NoInterestCount { get; set; }
    [JsonPropertyName("interest_only_threshold"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int InterestOnlyThreshold { get; set; }
    [JsonPropertyName("num_subs"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int TotalSubscriptions { get; set; }
    [JsonPropertyName("num_queue_subs"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int NumQueueSubscriptions { get; set; }
}
