using System.Text.Json.Serialization;

namespace Nats.Server.Protocol;

/// <summary>
/// The CONNECT a server sends to a peer server: one superset of Go's connectInfo (routes and gateways, route.go) and
/// leafConnectInfo (leafnode.go). Go writes the two structs with different field orders and omitempty rules, so each
/// has its own render; reading takes either (unknown fields ignored). <see cref="Lang"/> is only ever read: a client
/// that dialled a server port by mistake gives itself away with it.
/// </summary>
internal sealed class PeerConnect
{
    [JsonPropertyName("echo")] public bool Echo { get; set; }
    [JsonPropertyName("verbose")] public bool Verbose { get; set; }
    [JsonPropertyName("pedantic")] public bool Pedantic { get; set; }
    [JsonPropertyName("version")] public string? Version { get; set; }
    [JsonPropertyName("jwt")] public string? Jwt { get; set; }
    [JsonPropertyName("sig")] public string? Sig { get; set; }
    [JsonPropertyName("user")] public string? User { get; set; }
    [JsonPropertyName("pass")] public string? Pass { get; set; }
    [JsonPropertyName("auth_token")] public string? Token { get; set; }
    [JsonPropertyName("tls_required")] public bool TlsRequired { get; set; }
    [JsonPropertyName("headers")] public bool Headers { get; set; }
    [JsonPropertyName("server_id")] public string? ServerId { get; set; }
    [JsonPropertyName("domain")] public string? Domain { get; set; }

    /// <summary>A route or gateway puts its server id here, a leaf its server name.</summary>
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("is_hub")] public bool Hub { get; set; }
    [JsonPropertyName("cluster")] public string Cluster { get; set; } = "";
    [JsonPropertyName("cluster_dynamic")] public bool Dynamic { get; set; }
    [JsonPropertyName("lnoc")] public bool Lnoc { get; set; }
    [JsonPropertyName("jetstream")] public bool JetStream { get; set; }
    [JsonPropertyName("deny_pub")] public List<string>? DenyPub { get; set; }
    [JsonPropertyName("lang")] public string? Lang { get; set; }
    [JsonPropertyName("gateway")] public string? Gateway { get; set; }

    /// <summary>A route's or a gateway's CONNECT line (Go's connectInfo).</summary>
    public byte[] RenderRoute() => PeerJson.WriteLine("CONNECT "u8, this, PeerJson.RouteConnect, spaceBeforeCrLf: false);

    /// <summary>A leaf's CONNECT line (Go's leafConnectInfo).</summary>
    public byte[] RenderLeaf() => PeerJson.WriteLine("CONNECT "u8, this, PeerJson.LeafConnect, spaceBeforeCrLf: false);

    public static PeerConnect? Parse(ReadOnlySpan<byte> json) => PeerJson.Read(json, PeerJsonContext.Default.PeerConnect);
}
