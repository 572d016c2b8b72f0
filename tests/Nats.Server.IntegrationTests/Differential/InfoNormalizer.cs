using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Nats.Server.IntegrationTests.Differential;

/// <summary>
/// Makes an INFO line comparable between two servers: identity, address and build fields become
/// placeholders (their presence still counts), everything else (proto, headers, max_payload,
/// auth_required, ...) is compared by value. Keys are sorted so field order does not matter.
/// </summary>
internal static class InfoNormalizer
{
    private static readonly HashSet<string> Volatile = new(StringComparer.Ordinal)
    {
        "server_id", "server_name", "version", "go", "host", "port", "client_id", "client_ip",
        "nonce", "git_commit", "connect_urls", "ws_connect_urls", "ip", "xkey", "cluster",
    };

    private static readonly JsonSerializerOptions Readable = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static string Normalize(string line)
    {
        var json = line.Length > 5 ? line[5..] : string.Empty;
        JsonObject? obj;
        try
        {
            obj = JsonNode.Parse(json) as JsonObject;
        }
        catch (JsonException)
        {
            return "INFO <invalid json> " + json;
        }

        if (obj is null)
        {
            return "INFO <not an object> " + json;
        }

        var sorted = new JsonObject();
        foreach (var (key, value) in obj.OrderBy(p => p.Key, StringComparer.Ordinal))
        {
            sorted[key] = Volatile.Contains(key) ? JsonValue.Create("<" + key + ">") : value?.DeepClone();
        }

        return "INFO " + sorted.ToJsonString(Readable);
    }
}
