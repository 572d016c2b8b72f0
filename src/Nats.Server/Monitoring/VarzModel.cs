using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>/varz, field for field in the Go server's order (Varz in monitor.go); omitempty fields are nullable or default-skipped.</summary>
internal sealed class Varz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("server_name")] public string ServerName { get; set; } = "";
    [JsonPropertyName("version")] public string Version { get; set; } = "";
    [JsonPropertyName("proto")] public int Proto { get; set; }
    [JsonPropertyName("git_commit"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? GitCommit { get; set; }
    [JsonPropertyName("go")] public string Go { get; set; } = "";
    [JsonPropertyName("host")] public string Host { get; set; } = "";
    [JsonPropertyName("port")] public int Port { get; set; }
    [JsonPropertyName("auth_required"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool AuthRequired { get; set; }
    [JsonPropertyName("tls_required"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsRequired { get; set; }
    [JsonPropertyName("tls_verify"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsVerify { get; set; }
    [JsonPropertyName("ip"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Ip { get; set; }
    [JsonPropertyName("connect_urls"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string[]? ConnectUrls { get; set; }
    [JsonPropertyName("ws_connect_urls"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string[]? WsConnectUrls { get; set; }
    [JsonPropertyName("max_connections")] public int MaxConnections { get; set; }
    [JsonPropertyName("max_subscriptions"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int MaxSubscriptions { get; set; }
    /// <summary>Nanoseconds (a Go time.Duration).</summary>
    [JsonPropertyName("ping_interval")] public long PingInterval { get; set; }
    [JsonPropertyName("ping_max")] public int PingMax { get; set; }
    [JsonPropertyName("http_host")] public string HttpHost { get; set; } = "";
    [JsonPropertyName("http_port")] public int HttpPort { get; set; }
    [JsonPropertyName("http_base_path")] public string HttpBasePath { get; set; } = "";
    [JsonPropertyName("https_port")] public int HttpsPort { get; set; }
    /// <summary>Seconds, as a float.</summary>
    [JsonPropertyName("auth_timeout")] public double AuthTimeout { get; set; }
    [JsonPropertyName("max_control_line")] public int MaxControlLine { get; set; }
    [JsonPropertyName("max_payload")] public int MaxPayload { get; set; }
    [JsonPropertyName("max_pending")] public long MaxPending { get; set; }
    [JsonPropertyName("cluster")] public ClusterVarz Cluster { get; set; } = new();
    [JsonPropertyName("gateway")] public GatewayVarz Gateway { get; set; } = new();
    [JsonPropertyName("leaf")] public LeafVarz Leaf { get; set; } = new();
    [JsonPropertyName("mqtt")] public MqttVarz Mqtt { get; set; } = new();
    [JsonPropertyName("websocket")] public WebsocketVarz Websocket { get; set; } = new();
    [JsonPropertyName("jetstream")] public EmptyObject JetStream { get; set; } = new();
    [JsonPropertyName("tls_timeout")] public double TlsTimeout { get; set; }
    [JsonPropertyName("write_deadline")] public long WriteDeadline { get; set; }
    [JsonPropertyName("start")] public DateTime Start { get; set; }
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("uptime")] public string Uptime { get; set; } = "";
    [JsonPropertyName("mem")] public long Mem { get; set; }
    [JsonPropertyName("cores")] public int Cores { get; set; }
    [JsonPropertyName("gomaxprocs")] public int MaxProcs { get; set; }
    [JsonPropertyName("cpu")] public double Cpu { get; set; }
    [JsonPropertyName("connections")] public int Connections { get; set; }
    [JsonPropertyName("total_connections")] public long TotalConnections { get; set; }
    [JsonPropertyName("routes")] public int Routes { get; set; }
    [JsonPropertyName("remotes")] public int Remotes { get; set; }
    [JsonPropertyName("leafnodes")] public int LeafNodes { get; set; }

    /// <summary>Gateway connections, for /metrics only (Go's /varz has no such count; /gatewayz lists them).</summary>
    [JsonIgnore] public int OutboundGateways { get; set; }
    [JsonIgnore] public int InboundGateways { get; set; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; set; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; set; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; set; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; set; }
    [JsonPropertyName("slow_consumers")] public long SlowConsumers { get; set; }
    [JsonPropertyName("subscriptions")] public long Subscriptions { get; set; }
    [JsonPropertyName("http_req_stats")] public SortedDictionary<string, long> HttpReqStats { get; set; } = new(StringComparer.Ordinal);
    [JsonPropertyName("config_load_time")] public DateTime ConfigLoadTime { get; set; }
    [JsonPropertyName("system_account"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? SystemAccount { get; set; }
}

/// <summary>Go's MQTTOptsVarz: every field omitempty, so {} without an mqtt block.</summary>
internal sealed class MqttVarz
{
    [JsonPropertyName("host"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Host { get; set; }
    [JsonPropertyName("port"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; set; }
    [JsonPropertyName("no_auth_user"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? NoAuthUser { get; set; }
    [JsonPropertyName("auth_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; set; }
    [JsonPropertyName("tls_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; set; }
    [JsonPropertyName("js_domain"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? JsDomain { get; set; }
    /// <summary>Nanoseconds (a Go time.Duration).</summary>
    [JsonPropertyName("ack_wait"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long AckWait { get; set; }
    [JsonPropertyName("max_ack_pending"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int MaxAckPending { get; set; }
}

/// <summary>
/// The cluster/gateway/leaf/mqtt/websocket/jetstream sub-objects: every field in Go is omitempty,
/// so with none of those features configured each one is written as {}.
/// </summary>
internal sealed class EmptyObject;

/// <summary>Go's GatewayOptsVarz: every field omitempty, so no gateway block shows as {}.</summary>
internal sealed class GatewayVarz
{
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
    [JsonPropertyName("host"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; set; }
    [JsonPropertyName("port"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; set; }
    [JsonPropertyName("auth_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; set; }
    [JsonPropertyName("tls_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; set; }
    [JsonPropertyName("advertise"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Advertise { get; set; }
    [JsonPropertyName("connect_retries"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int ConnectRetries { get; set; }
    [JsonPropertyName("gateways"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<GatewayRemoteVarz>? Gateways { get; set; }
    [JsonPropertyName("reject_unknown"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool RejectUnknown { get; set; }
}

/// <summary>Go's RemoteGatewayOptsVarz.</summary>
internal sealed class GatewayRemoteVarz
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("urls"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Urls { get; set; }
}

/// <summary>Go's LeafNodeOptsVarz: every field omitempty, so no leafnodes block shows as {}.</summary>
internal sealed class LeafVarz
{
    [JsonPropertyName("host"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; set; }
    [JsonPropertyName("port"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; set; }
    [JsonPropertyName("auth_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; set; }
    [JsonPropertyName("tls_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; set; }
    [JsonPropertyName("remotes"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<LeafRemoteVarz>? Remotes { get; set; }
}

/// <summary>Go's RemoteLeafOptsVarz.</summary>
internal sealed class LeafRemoteVarz
{
    [JsonPropertyName("local_account"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? LocalAccount { get; set; }
    [JsonPropertyName("urls"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Urls { get; set; }
    [JsonPropertyName("deny"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public LeafDenyVarz? Deny { get; set; }
}

/// <summary>Go's DenyRules.</summary>
internal sealed class LeafDenyVarz
{
    [JsonPropertyName("exports"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Exports { get; set; }
    [JsonPropertyName("imports"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Imports { get; set; }
}

/// <summary>Go's ClusterOptsVarz: every field omitempty, so no cluster shows as {}.</summary>
internal sealed class ClusterVarz
{
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
    [JsonPropertyName("addr"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; set; }
    [JsonPropertyName("cluster_port"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; set; }
    [JsonPropertyName("auth_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; set; }
    [JsonPropertyName("urls"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Urls { get; set; }
}

/// <summary>Go's WebsocketOptsVarz: every field omitempty, so an unconfigured listener shows as {}.</summary>
internal sealed class WebsocketVarz
{
    [JsonPropertyName("host"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; set; }
    [JsonPropertyName("port"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; set; }
    [JsonPropertyName("advertise"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Advertise { get; set; }
    [JsonPropertyName("no_auth_user"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? NoAuthUser { get; set; }
    [JsonPropertyName("jwt_cookie"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? JwtCookie { get; set; }
    /// <summary>Nanoseconds.</summary>
    [JsonPropertyName("handshake_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long HandshakeTimeout { get; set; }
    [JsonPropertyName("auth_timeout"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; set; }
    [JsonPropertyName("no_tls"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool NoTls { get; set; }
    [JsonPropertyName("tls_map"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsMap { get; set; }
    [JsonPropertyName("same_origin"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool SameOrigin { get; set; }
    [JsonPropertyName("allowed_origins"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? AllowedOrigins { get; set; }
    [JsonPropertyName("compression"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Compression { get; set; }
}
