using System.Buffers;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Nats.Server.Gateways;

/// <summary>
/// A gateway INFO (Go's Info struct as a gateway fills it): the acceptor's opening, the gossip of another
/// gateway (<c>gateway_cmd</c> 1) and the interest-only switch commands (2 and 3, the account as a base64
/// <c>gateway_cmd_payload</c>, Go's []byte). Written in Go's field order with its omitempty rules, read leniently.
/// </summary>
internal sealed class GatewayInfo
{
    public const byte CmdGossip = 1;
    public const byte CmdAllSubsStart = 2;
    public const byte CmdAllSubsComplete = 3;

    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    public string ServerId { get; set; } = "";
    public string ServerName { get; set; } = "";
    public string Version { get; set; } = "";
    public string Host { get; set; } = "";
    public int Port { get; set; }
    public bool Headers { get; set; }
    public bool AuthRequired { get; set; }
    public int MaxPayload { get; set; }
    public string? Gateway { get; set; }
    public List<string>? GatewayUrls { get; set; }
    public string? GatewayUrl { get; set; }
    public byte GatewayCmd { get; set; }
    public string? GatewayCmdPayload { get; set; }
    public bool GatewayNrp { get; set; }
    public bool GatewayIom { get; set; }

    /// <summary>The line: <c>INFO {json}\r\n</c>, as Go's InfoProto writes it.</summary>
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
            json.WriteNumber("proto", 0);
            json.WriteString("go", "");
            json.WriteString("host", Host);
            json.WriteNumber("port", Port);
            json.WriteBoolean("headers", Headers);
            if (AuthRequired)
            {
                json.WriteBoolean("auth_required", true);
            }
            json.WriteNumber("max_payload", MaxPayload);
            if (!string.IsNullOrEmpty(Gateway))
            {
                json.WriteString("gateway", Gateway);
            }
            if (GatewayUrls is { Count: > 0 })
            {
                json.WriteStartArray("gateway_urls");
                foreach (var url in GatewayUrls)
                {
                    json.WriteStringValue(url);
                }
                json.WriteEndArray();
            }
            if (!string.IsNullOrEmpty(GatewayUrl))
            {
                json.WriteString("gateway_url", GatewayUrl);
            }
            if (GatewayCmd != 0)
            {
                json.WriteNumber("gateway_cmd", GatewayCmd);
            }
            if (!string.IsNullOrEmpty(GatewayCmdPayload))
            {
                json.WriteBase64String("gateway_cmd_payload", Encoding.UTF8.GetBytes(GatewayCmdPayload));
            }
            if (GatewayNrp)
            {
                json.WriteBoolean("gateway_nrp", true);
            }
            if (GatewayIom)
            {
                json.WriteBoolean("gateway_iom", true);
            }
            json.WriteEndObject();
        }
        buffer.Write("\r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Reads the JSON of an INFO line; null when it is not a JSON object.</summary>
    public static GatewayInfo? Parse(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                return null;
            }
            var info = new GatewayInfo();
            foreach (var property in root.EnumerateObject())
            {
                var v = property.Value;
                var text = v.ValueKind == JsonValueKind.String ? v.GetString() : null;
                switch (property.Name)
                {
                    case "server_id": info.ServerId = text ?? ""; break;
                    case "server_name": info.ServerName = text ?? ""; break;
                    case "host": info.Host = text ?? ""; break;
                    case "port": info.Port = v.ValueKind == JsonValueKind.Number && v.TryGetInt32(out var port) ? port : 0; break;
                    case "headers": info.Headers = v.ValueKind == JsonValueKind.True; break;
                    case "auth_required": info.AuthRequired = v.ValueKind == JsonValueKind.True; break;
                    case "gateway": info.Gateway = text; break;
                    case "gateway_url": info.GatewayUrl = text; break;
                    case "gateway_nrp": info.GatewayNrp = v.ValueKind == JsonValueKind.True; break;
                    case "gateway_iom": info.GatewayIom = v.ValueKind == JsonValueKind.True; break;
                    case "gateway_cmd": info.GatewayCmd = v.ValueKind == JsonValueKind.Number && v.TryGetByte(out var cmd) ? cmd : (byte)0; break;
                    case "gateway_cmd_payload":
                        info.GatewayCmdPayload = text is null ? null : Encoding.UTF8.GetString(Convert.FromBase64String(text));
                        break;
                    case "gateway_urls":
                        if (v.ValueKind == JsonValueKind.Array)
                        {
                            info.GatewayUrls = [.. v.EnumerateArray().Where(e => e.ValueKind == JsonValueKind.String).Select(e => e.GetString()!)];
                        }
                        break;
                }
            }
            return info;
        }
        catch (Exception e) when (e is JsonException or FormatException)
        {
            return null;
        }
    }
}
