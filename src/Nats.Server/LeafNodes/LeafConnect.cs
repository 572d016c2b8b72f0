using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Nats.Server.LeafNodes;

/// <summary>A leaf CONNECT (Go's leafConnectInfo): written in Go's field order, read leniently.</summary>
internal sealed class LeafConnect
{
    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    public string Version { get; set; } = "";
    public string? Jwt { get; set; }
    public string? Sig { get; set; }
    public string? User { get; set; }
    public string? Pass { get; set; }
    public string? Token { get; set; }
    public string ServerId { get; set; } = "";
    public string? Domain { get; set; }
    public string Name { get; set; } = "";
    public bool Hub { get; set; }
    public string Cluster { get; set; } = "";
    public bool Headers { get; set; }
    public bool JetStream { get; set; }
    public List<string>? DenyPub { get; set; }

    /// <summary>Sent by a client that dialled the leaf port by mistake; a leaf never sends it.</summary>
    public string? Lang { get; set; }
    public string? Gateway { get; set; }

    public byte[] Render()
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        buffer.Write("CONNECT "u8);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("version", Version);
            WriteNonEmpty(json, "jwt", Jwt);
            WriteNonEmpty(json, "sig", Sig);
            WriteNonEmpty(json, "user", User);
            WriteNonEmpty(json, "pass", Pass);
            json.WriteBoolean("tls_required", false);
            WriteNonEmpty(json, "server_id", ServerId);
            WriteNonEmpty(json, "domain", Domain);
            WriteNonEmpty(json, "name", Name);
            if (Hub)
            {
                json.WriteBoolean("is_hub", true);
            }
            WriteNonEmpty(json, "cluster", Cluster);
            if (Headers)
            {
                json.WriteBoolean("headers", true);
            }
            if (JetStream)
            {
                json.WriteBoolean("jetstream", true);
            }
            if (DenyPub is { Count: > 0 })
            {
                json.WriteStartArray("deny_pub");
                foreach (var subject in DenyPub)
                {
                    json.WriteStringValue(subject);
                }
                json.WriteEndArray();
            }
            json.WriteEndObject();
        }
        buffer.Write("\r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }

    private static void WriteNonEmpty(Utf8JsonWriter json, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            json.WriteString(name, value);
        }
    }

    public static LeafConnect? Parse(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                return null;
            }
            var connect = new LeafConnect();
            foreach (var property in document.RootElement.EnumerateObject())
            {
                var v = property.Value;
                var text = v.ValueKind == JsonValueKind.String ? v.GetString() : null;
                switch (property.Name)
                {
                    case "version": connect.Version = text ?? ""; break;
                    case "jwt": connect.Jwt = text; break;
                    case "sig": connect.Sig = text; break;
                    case "user": connect.User = text; break;
                    case "pass": connect.Pass = text; break;
                    case "auth_token": connect.Token = text; break;
                    case "server_id": connect.ServerId = text ?? ""; break;
                    case "domain": connect.Domain = text; break;
                    case "name": connect.Name = text ?? ""; break;
                    case "is_hub": connect.Hub = v.ValueKind == JsonValueKind.True; break;
                    case "cluster": connect.Cluster = text ?? ""; break;
                    case "headers": connect.Headers = v.ValueKind == JsonValueKind.True; break;
                    case "jetstream": connect.JetStream = v.ValueKind == JsonValueKind.True; break;
                    case "lang": connect.Lang = text; break;
                    case "gateway": connect.Gateway = text; break;
                    case "deny_pub":
                        if (v.ValueKind == JsonValueKind.Array)
                        {
                            connect.DenyPub = [.. v.EnumerateArray().Where(e => e.ValueKind == JsonValueKind.String).Select(e => e.GetString()!)];
                        }
                        break;
                }
            }
            return connect;
        }
        catch (JsonException)
        {
            return null;
        }
    }
}
