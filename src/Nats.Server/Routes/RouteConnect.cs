using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Nats.Server.Routes;

/// <summary>A route or gateway CONNECT (Go's connectInfo in route.go, shared by both): written in Go's field order, read leniently.</summary>
internal sealed class RouteConnect
{
    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    /// <summary>Routes say true, gateways false.</summary>
    public bool Echo { get; set; } = true;
    public string? User { get; set; }
    public string? Pass { get; set; }
    public bool TlsRequired { get; set; }
    public bool Headers { get; set; }

    /// <summary>The sender's server id (Go puts the id, not the name, here).</summary>
    public string Name { get; set; } = "";
    public string Cluster { get; set; } = "";
    public bool Dynamic { get; set; }
    public bool Lnoc { get; set; }

    /// <summary>Set by a client that dialled the route port by mistake; a route never sends it.</summary>
    public string? Lang { get; set; }
    public string? Gateway { get; set; }

    public byte[] Render()
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        buffer.Write("CONNECT "u8);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteBoolean("echo", Echo);
            json.WriteBoolean("verbose", false);
            json.WriteBoolean("pedantic", false);
            if (!string.IsNullOrEmpty(User))
            {
                json.WriteString("user", User);
            }
            if (!string.IsNullOrEmpty(Pass))
            {
                json.WriteString("pass", Pass);
            }
            json.WriteBoolean("tls_required", TlsRequired);
            json.WriteBoolean("headers", Headers);
            json.WriteString("name", Name);
            json.WriteString("cluster", Cluster);
            if (Dynamic)
            {
                json.WriteBoolean("cluster_dynamic", true);
            }
            if (Lnoc)
            {
                json.WriteBoolean("lnoc", true);
            }
            if (!string.IsNullOrEmpty(Gateway))
            {
                json.WriteString("gateway", Gateway);
            }
            json.WriteEndObject();
        }
        buffer.Write("\r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }

    public static RouteConnect? Parse(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                return null;
            }
            var connect = new RouteConnect();
            foreach (var property in document.RootElement.EnumerateObject())
            {
                var v = property.Value;
                var text = v.ValueKind == JsonValueKind.String ? v.GetString() : null;
                switch (property.Name)
                {
                    case "user": connect.User = text; break;
                    case "pass": connect.Pass = text; break;
                    case "tls_required": connect.TlsRequired = v.ValueKind == JsonValueKind.True; break;
                    case "headers": connect.Headers = v.ValueKind == JsonValueKind.True; break;
                    case "name": connect.Name = text ?? ""; break;
                    case "cluster": connect.Cluster = text ?? ""; break;
                    case "cluster_dynamic": connect.Dynamic = v.ValueKind == JsonValueKind.True; break;
                    case "lnoc": connect.Lnoc = v.ValueKind == JsonValueKind.True; break;
                    case "lang": connect.Lang = text; break;
                    case "gateway": connect.Gateway = text; break;
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
