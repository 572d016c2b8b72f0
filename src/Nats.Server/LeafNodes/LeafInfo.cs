using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Nats.Server.LeafNodes;

/// <summary>A leaf connection's INFO (Go's Info as copyLeafNodeInfo fills it): written in Go's field order, read leniently.</summary>
internal sealed class LeafInfo
{
    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    public string ServerId { get; set; } = "";
    public string ServerName { get; set; } = "";
    public string Version { get; set; } = "";
    public string Go { get; set; } = "";
    public string Host { get; set; } = "";
    public int Port { get; set; }
    public bool Headers { get; set; }
    public int MaxPayload { get; set; }
    public bool JetStream { get; set; }
    public string? Ip { get; set; }
    public ulong ClientId { get; set; }
    public string? Nonce { get; set; }
    public string? Cluster { get; set; }
    public string? Domain { get; set; }
    public bool InfoOnConnect { get; set; }
    public bool ConnectInfo { get; set; }
    public List<string>? LeafNodeUrls { get; set; }
    public string? RemoteAccount { get; set; }

    /// <summary>Set on an INFO a client port or a route port sends, which a leaf must refuse.</summary>
    public bool HasGateway { get; set; }

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
            json.WriteNumber("proto", 1);
            json.WriteString("go", Go);
            json.WriteString("host", Host);
            json.WriteNumber("port", Port);
            json.WriteBoolean("headers", Headers);
            // Go always asks a leaf for credentials: its CONNECT binds the account.
            json.WriteBoolean("auth_required", true);
            json.WriteNumber("max_payload", MaxPayload);
            if (JetStream)
            {
                json.WriteBoolean("jetstream", true);
            }
            if (!string.IsNullOrEmpty(Ip))
            {
                json.WriteString("ip", Ip);
            }
            if (ClientId != 0)
            {
                json.WriteNumber("client_id", ClientId);
            }
            if (!string.IsNullOrEmpty(Nonce))
            {
                json.WriteString("nonce", Nonce);
            }
            if (!string.IsNullOrEmpty(Cluster))
            {
                json.WriteString("cluster", Cluster);
            }
            if (!string.IsNullOrEmpty(Domain))
            {
                json.WriteString("domain", Domain);
            }
            json.WriteBoolean("info_on_connect", true);
            if (ConnectInfo)
            {
                json.WriteBoolean("connect_info", true);
            }
            if (LeafNodeUrls is not null)
            {
                json.WriteStartArray("leafnode_urls");
                foreach (var url in LeafNodeUrls)
                {
                    json.WriteStringValue(url);
                }
                json.WriteEndArray();
            }
            if (!string.IsNullOrEmpty(RemoteAccount))
            {
                json.WriteString("remote_account", RemoteAccount);
            }
            json.WriteEndObject();
        }
        buffer.Write(" \r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }

    public static LeafInfo? Parse(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                return null;
            }
            var info = new LeafInfo();
            foreach (var property in document.RootElement.EnumerateObject())
            {
                var v = property.Value;
                var text = v.ValueKind == JsonValueKind.String ? v.GetString() : null;
                switch (property.Name)
                {
                    case "server_id": info.ServerId = text ?? ""; break;
                    case "server_name": info.ServerName = text ?? ""; break;
                    case "version": info.Version = text ?? ""; break;
                    case "headers": info.Headers = v.ValueKind == JsonValueKind.True; break;
                    case "max_payload": info.MaxPayload = v.ValueKind == JsonValueKind.Number && v.TryGetInt32(out var m) ? m : 0; break;
                    case "jetstream": info.JetStream = v.ValueKind == JsonValueKind.True; break;
                    case "client_id": info.ClientId = v.ValueKind == JsonValueKind.Number && v.TryGetUInt64(out var id) ? id : 0; break;
                    case "nonce": info.Nonce = text; break;
                    case "cluster": info.Cluster = text; break;
                    case "domain": info.Domain = text; break;
                    case "info_on_connect": info.InfoOnConnect = v.ValueKind == JsonValueKind.True; break;
                    case "connect_info": info.ConnectInfo = v.ValueKind == JsonValueKind.True; break;
                    case "remote_account": info.RemoteAccount = text; break;
                    case "gateway": info.HasGateway = true; break;
                    case "leafnode_urls":
                        if (v.ValueKind == JsonValueKind.Array)
                        {
                            info.LeafNodeUrls = [.. v.EnumerateArray().Where(e => e.ValueKind == JsonValueKind.String).Select(e => e.GetString()!)];
                        }
                        break;
                }
            }
            return info;
        }
        catch (JsonException)
        {
            return null;
        }
    }
}
