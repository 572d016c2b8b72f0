using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Nats.Server.Routes;

/// <summary>
/// A route INFO (Go's Info struct as a route fills it): written with Go's field order and omitempty
/// rules, read leniently (unknown fields ignored, as Go's json.Unmarshal does).
/// </summary>
internal sealed class RouteInfo
{
    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    public string ServerId { get; set; } = "";
    public string ServerName { get; set; } = "";
    public string Version { get; set; } = "";
    public int Proto { get; set; }
    public string Go { get; set; } = "";
    public string Host { get; set; } = "";
    public int Port { get; set; }
    public bool Headers { get; set; }
    public bool AuthRequired { get; set; }
    public bool TlsRequired { get; set; }
    public bool TlsVerify { get; set; }
    public int MaxPayload { get; set; }
    public bool JetStream { get; set; }
    public string? Ip { get; set; }
    public string? Nonce { get; set; }
    public string? Cluster { get; set; }
    public bool Dynamic { get; set; }
    public string? Domain { get; set; }
    public List<string>? ConnectUrls { get; set; }
    public List<string>? WsConnectUrls { get; set; }
    public bool LameDuckMode { get; set; }
    public bool Lnoc { get; set; }
    public string? GatewayUrl { get; set; }
    public List<string>? LeafNodeUrls { get; set; }

    /// <summary>Gateway gossip over a route (Go's forwardNewGatewayToLocalCluster): read, never written by a route.</summary>
    public string? Gateway { get; set; }
    public List<string>? GatewayUrls { get; set; }
    public int GatewayCmd { get; set; }

    public RouteInfo Clone() => (RouteInfo)MemberwiseClone();

    /// <summary>The line: <c>INFO {json} \r\n</c>, as Go writes it.</summary>
    public byte[] Render()
    {
        var buffer = new ArrayBufferWriter<byte>(512);
        buffer.Write("INFO "u8);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("server_id", ServerId);
            json.WriteString("server_name", ServerName);
            json.WriteString("version", Version);
            json.WriteNumber("proto", Proto);
            json.WriteString("go", Go);
            json.WriteString("host", Host);
            json.WriteNumber("port", Port);
            json.WriteBoolean("headers", Headers);
            WriteTrue(json, "auth_required", AuthRequired);
            WriteTrue(json, "tls_required", TlsRequired);
            WriteTrue(json, "tls_verify", TlsVerify);
            json.WriteNumber("max_payload", MaxPayload);
            WriteTrue(json, "jetstream", JetStream);
            WriteNonEmpty(json, "ip", Ip);
            WriteNonEmpty(json, "nonce", Nonce);
            WriteNonEmpty(json, "cluster", Cluster);
            WriteTrue(json, "cluster_dynamic", Dynamic);
            WriteNonEmpty(json, "domain", Domain);
            WriteList(json, "connect_urls", ConnectUrls);
            WriteList(json, "ws_connect_urls", WsConnectUrls);
            WriteTrue(json, "ldm", LameDuckMode);
            WriteTrue(json, "lnoc", Lnoc);
            WriteNonEmpty(json, "gateway_url", GatewayUrl);
            WriteList(json, "leafnode_urls", LeafNodeUrls);
            json.WriteEndObject();
        }
        buffer.Write(" \r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Reads the JSON of an INFO line; null when it is not a JSON object.</summary>
    public static RouteInfo? Parse(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                return null;
            }
            var info = new RouteInfo();
            foreach (var property in root.EnumerateObject())
            {
                var v = property.Value;
                switch (property.Name)
                {
                    case "server_id": info.ServerId = String(v) ?? ""; break;
                    case "server_name": info.ServerName = String(v) ?? ""; break;
                    case "version": info.Version = String(v) ?? ""; break;
                    case "proto": info.Proto = Int(v); break;
                    case "go": info.Go = String(v) ?? ""; break;
                    case "host": info.Host = String(v) ?? ""; break;
                    case "port": info.Port = Int(v); break;
                    case "headers": info.Headers = v.ValueKind == JsonValueKind.True; break;
                    case "auth_required": info.AuthRequired = v.ValueKind == JsonValueKind.True; break;
                    case "tls_required": info.TlsRequired = v.ValueKind == JsonValueKind.True; break;
                    case "max_payload": info.MaxPayload = Int(v); break;
                    case "jetstream": info.JetStream = v.ValueKind == JsonValueKind.True; break;
                    case "ip": info.Ip = String(v); break;
                    case "nonce": info.Nonce = String(v); break;
                    case "cluster": info.Cluster = String(v); break;
                    case "cluster_dynamic": info.Dynamic = v.ValueKind == JsonValueKind.True; break;
                    case "domain": info.Domain = String(v); break;
                    case "connect_urls": info.ConnectUrls = List(v); break;
                    case "ws_connect_urls": info.WsConnectUrls = List(v); break;
                    case "ldm": info.LameDuckMode = v.ValueKind == JsonValueKind.True; break;
                    case "lnoc": info.Lnoc = v.ValueKind == JsonValueKind.True; break;
                    case "gateway_url": info.GatewayUrl = String(v); break;
                    case "gateway": info.Gateway = String(v); break;
                    case "gateway_urls": info.GatewayUrls = List(v); break;
                    case "gateway_cmd": info.GatewayCmd = Int(v); break;
                    case "leafnode_urls": info.LeafNodeUrls = List(v); break;
                }
            }
            return info;
        }
        catch (JsonException)
        {
            return null;
        }
    }

    private static string? String(JsonElement v) => v.ValueKind == JsonValueKind.String ? v.GetString() : null;

    private static int Int(JsonElement v) => v.ValueKind == JsonValueKind.Number && v.TryGetInt32(out var i) ? i : 0;

    private static List<string>? List(JsonElement v)
    {
        if (v.ValueKind != JsonValueKind.Array)
        {
            return null;
        }
        var list = new List<string>();
        foreach (var item in v.EnumerateArray())
        {
            if (item.ValueKind == JsonValueKind.String)
            {
                list.Add(item.GetString()!);
            }
        }
        return list;
    }

    private static void WriteTrue(Utf8JsonWriter json, string name, bool value)
    {
        if (value)
        {
            json.WriteBoolean(name, true);
        }
    }

    private static void WriteNonEmpty(Utf8JsonWriter json, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            json.WriteString(name, value);
        }
    }

    private static void WriteList(Utf8JsonWriter json, string name, List<string>? values)
    {
        if (values is not { Count: > 0 })
        {
            return;
        }
        json.WriteStartArray(name);
        foreach (var value in values)
        {
            json.WriteStringValue(value);
        }
        json.WriteEndArray();
    }
}
