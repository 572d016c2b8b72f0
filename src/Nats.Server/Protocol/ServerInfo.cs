using System.Text.Json.Serialization;

namespace Nats.Server.Protocol;

/// <summary>
/// The INFO every connection kind exchanges (Go's Info in server.go): one superset in Go's field order. Clients,
/// routes, gateways and leaf nodes each fill their fields; <see cref="PeerJson"/> writes it with Go's omitempty rules
/// (the nine fields Go always writes, the rest only when set) and reads it leniently (unknown fields ignored).
/// </summary>
internal sealed class ServerInfo
{
    [JsonPropertyName("server_id")] public string ServerId { get; set; } = "";
    [JsonPropertyName("server_name")] public string ServerName { get; set; } = "";
    [JsonPropertyName("version")] public string Version { get; set; } = "";
    [JsonPropertyName("proto")] public int Proto { get; set; }
    [JsonPropertyName("git_commit")] public string? GitCommit { get; set; }
    [JsonPropertyName("go")] public string Go { get; set; } = "";
    [JsonPropertyName("host")] public string Host { get; set; } = "";
    [JsonPropertyName("port")] public int Port { get; set; }
    [JsonPropertyName("headers")] public bool Headers { get; set; }
    [JsonPropertyName("auth_required")] public bool AuthRequired { get; set; }
    [JsonPropertyName("tls_required")] public bool TlsRequired { get; set; }
    [JsonPropertyName("tls_verify")] public bool TlsVerify { get; set; }

    /// <summary>allow_non_tls: TLS is offered, not required.</summary>
    [JsonPropertyName("tls_available")] public bool TlsAvailable { get; set; }
    [JsonPropertyName("max_payload")] public int MaxPayload { get; set; }
    [JsonPropertyName("jetstream")] public bool JetStream { get; set; }
    [JsonPropertyName("ip")] public string? Ip { get; set; }
    [JsonPropertyName("client_id")] public ulong ClientId { get; set; }
    [JsonPropertyName("client_ip")] public string? ClientIp { get; set; }
    [JsonPropertyName("nonce")] public string? Nonce { get; set; }
    [JsonPropertyName("cluster")] public string? Cluster { get; set; }
    [JsonPropertyName("cluster_dynamic")] public bool Dynamic { get; set; }
    [JsonPropertyName("domain")] public string? Domain { get; set; }
    [JsonPropertyName("connect_urls")] public List<string>? ConnectUrls { get; set; }
    [JsonPropertyName("ws_connect_urls")] public List<string>? WsConnectUrls { get; set; }
    [JsonPropertyName("ldm")] public bool LameDuckMode { get; set; }

    /// <summary>The cluster's route permissions (Go's RoutePermissions), told to peers so they can resend interest on a change.</summary>
    [JsonPropertyName("import")] public PeerSubjectPermission? Import { get; set; }
    [JsonPropertyName("export")] public PeerSubjectPermission? Export { get; set; }
    [JsonPropertyName("lnoc")] public bool Lnoc { get; set; }
    [JsonPropertyName("info_on_connect")] public bool InfoOnConnect { get; set; }
    [JsonPropertyName("connect_info")] public bool ConnectInfo { get; set; }

    /// <summary>The origin gateway's name; on a leaf port it marks an INFO a leaf must refuse.</summary>
    [JsonPropertyName("gateway")] public string? Gateway { get; set; }
    [JsonPropertyName("gateway_urls")] public List<string>? GatewayUrls { get; set; }
    [JsonPropertyName("gateway_url")] public string? GatewayUrl { get; set; }
    [JsonPropertyName("gateway_cmd")] public byte GatewayCmd { get; set; }

    /// <summary>Go's []byte: base64 in the JSON (the account of an interest-only switch).</summary>
    [JsonPropertyName("gateway_cmd_payload")] public byte[]? GatewayCmdPayload { get; set; }
    [JsonPropertyName("gateway_nrp")] public bool GatewayNrp { get; set; }
    [JsonPropertyName("gateway_iom")] public bool GatewayIom { get; set; }
    [JsonPropertyName("leafnode_urls")] public List<string>? LeafNodeUrls { get; set; }
    [JsonPropertyName("remote_account")] public string? RemoteAccount { get; set; }

    public ServerInfo Clone() => (ServerInfo)MemberwiseClone();

    /// <summary>
    /// The line as Go's generateInfoJSON writes it for clients, routes and leaf nodes, <c>INFO {json} \r\n</c> (a space
    /// before the CRLF); gateways use Go's InfoProto, <c>INFO {json}\r\n</c>.
    /// </summary>
    public byte[] Render(bool spaceBeforeCrLf = true) => PeerJson.WriteLine("INFO "u8, this, PeerJson.Info, spaceBeforeCrLf);

    /// <summary>Reads the JSON of an INFO line; null when it is not a JSON object of Go's Info.</summary>
    public static ServerInfo? Parse(ReadOnlySpan<byte> json) => PeerJson.Read(json, PeerJsonContext.Default.ServerInfo);
}

/// <summary>Go's SubjectPermission as INFO carries it (both lists omitempty).</summary>
internal sealed class PeerSubjectPermission
{
    [JsonPropertyName("allow"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull), JsonConverter(typeof(GoEscapedStringList))]
    public List<string>? Allow { get; set; }

    [JsonPropertyName("deny"), JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull), JsonConverter(typeof(GoEscapedStringList))]
    public List<string>? Deny { get; set; }
}

/// <summary>Strings as Go's encoding/json writes them: &lt;, &gt; and &amp; escaped (so a subject "foo.&gt;" is "foo.\u003e").</summary>
internal sealed class GoEscapedStringList : JsonConverter<List<string>>
{
    public override List<string>? Read(ref System.Text.Json.Utf8JsonReader reader, Type typeToConvert, System.Text.Json.JsonSerializerOptions options)
    {
        if (reader.TokenType != System.Text.Json.JsonTokenType.StartArray)
        {
            throw new System.Text.Json.JsonException("expected an array of strings");
        }
        var items = new List<string>();
        while (reader.Read() && reader.TokenType != System.Text.Json.JsonTokenType.EndArray)
        {
            items.Add(reader.GetString() ?? "");
        }
        return items;
    }

    public override void Write(System.Text.Json.Utf8JsonWriter writer, List<string> value, System.Text.Json.JsonSerializerOptions options)
    {
        var text = new System.Text.StringBuilder("[");
        for (var i = 0; i < value.Count; i++)
        {
            text.Append(i == 0 ? "\"" : ",\"");
            foreach (var c in value[i])
            {
                text.Append(c switch
                {
                    '"' => "\\\"",
                    '\\' => "\\\\",
                    '<' => "\\u003c",
                    '>' => "\\u003e",
                    '&' => "\\u0026",
                    < ' ' => "\\u" + ((int)c).ToString("x4", System.Globalization.CultureInfo.InvariantCulture),
                    _ => c.ToString(),
                });
            }
            text.Append('"');
        }
        writer.WriteRawValue(text.Append(']').ToString(), skipInputValidation: true);
    }
}
