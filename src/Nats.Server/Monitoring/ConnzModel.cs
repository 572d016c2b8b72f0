using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>/connz (Connz in monitor.go).</summary>
internal sealed class Connz
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; set; }
    [JsonPropertyName("num_connections")] public int NumConnections { get; set; }
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("connections")] public List<ConnInfo>? Connections { get; set; } = [];
}

/// <summary>One connection (ConnInfo in monitor.go); also what the closed-connection ring keeps.</summary>
internal sealed class ConnInfo
{
    [JsonPropertyName("cid")] public ulong Cid { get; set; }
    [JsonPropertyName("kind")] public string Kind { get; set; } = "Client";
    [JsonPropertyName("type")] public string Type { get; set; } = "nats";
    [JsonPropertyName("ip")] public string Ip { get; set; } = "";
    [JsonPropertyName("port")] public int Port { get; set; }
    [JsonPropertyName("start")] public DateTime Start { get; set; }
    [JsonPropertyName("last_activity")] public DateTime LastActivity { get; set; }
    [JsonPropertyName("stop"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? Stop { get; set; }
    [JsonPropertyName("reason"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Reason { get; set; }
    [JsonPropertyName("rtt"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Rtt { get; set; }
    [JsonPropertyName("uptime")] public string Uptime { get; set; } = "";
    [JsonPropertyName("idle")] public string Idle { get; set; } = "";
    [JsonPropertyName("pending_bytes")] public long PendingBytes { get; set; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; set; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; set; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; set; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; set; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; set; }
    [JsonPropertyName("name"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
    [JsonPropertyName("lang"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Lang { get; set; }
    [JsonPropertyName("version"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Version { get; set; }
    [JsonPropertyName("tls_version"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? TlsVersion { get; set; }
    [JsonPropertyName("tls_cipher_suite"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? TlsCipherSuite { get; set; }
    [JsonPropertyName("tls_peer_certs"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<TlsPeerCert>? TlsPeerCerts { get; set; }
    [JsonPropertyName("authorized_user"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? AuthorizedUser { get; set; }
    [JsonPropertyName("account"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; set; }
    [JsonPropertyName("subscriptions_list"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? SubscriptionsList { get; set; }
    [JsonPropertyName("subscriptions_list_detail"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<SubDetail>? SubscriptionsListDetail { get; set; }

    /// <summary>The MQTT client id (Go's mqtt_client), only on MQTT connections.</summary>
    [JsonPropertyName("mqtt_client"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? MqttClient { get; set; }

    public ConnInfo ShallowCopy() => (ConnInfo)MemberwiseClone();
}

/// <summary>One subscription (SubDetail in monitor.go).</summary>
internal sealed class SubDetail
{
    [JsonPropertyName("account"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; set; }
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("qgroup"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Queue { get; set; }
    [JsonPropertyName("sid")] public string Sid { get; set; } = "";
    [JsonPropertyName("msgs")] public long Msgs { get; set; }
    [JsonPropertyName("max"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long Max { get; set; }
    [JsonPropertyName("cid")] public ulong Cid { get; set; }
}

/// <summary>A client certificate in /connz?auth=1 (TLSPeerCert in monitor.go).</summary>
internal sealed class TlsPeerCert
{
    [JsonPropertyName("subject"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Subject { get; set; }
    [JsonPropertyName("spki_sha256"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? SpkiSha256 { get; set; }
    [JsonPropertyName("cert_sha256"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? CertSha256 { get; set; }

    /// <summary>Go's makePeerCerts for the certificate the client presented; null without one.</summary>
    public static List<TlsPeerCert>? From(System.Security.Cryptography.X509Certificates.X509Certificate2? certificate)
    {
        if (certificate is null)
        {
            return null;
        }
        var subject = Tls.CertificateIdentity.From(certificate).Subject;
        return
        [
            new TlsPeerCert
            {
                Subject = subject.Length == 0 ? null : subject,
                SpkiSha256 = Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(certificate.PublicKey.ExportSubjectPublicKeyInfo())),
                CertSha256 = Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(certificate.RawData)),
            },
        ];
    }
}
