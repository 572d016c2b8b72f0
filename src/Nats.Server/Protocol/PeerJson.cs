using System.Buffers;
using System.Collections;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;

namespace Nats.Server.Protocol;

/// <summary>Source-generated metadata for INFO and CONNECT, so the executable needs no reflection (Native AOT).</summary>
[JsonSerializable(typeof(ServerInfo))]
[JsonSerializable(typeof(PeerConnect))]
internal sealed partial class PeerJsonContext : JsonSerializerContext;

/// <summary>
/// Go's encoding/json for the protocol structs: a shape is the field list and order of one Go struct and the fields
/// it writes even when empty; every other field follows omitempty (no empty string, false, zero or empty list).
/// Shapes are metadata modifiers over the generated context, built once.
/// </summary>
internal static class PeerJson
{
    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    /// <summary>Go's Info: every field in declaration order.</summary>
    public static readonly JsonTypeInfo<ServerInfo> Info = Shape<ServerInfo>(null,
        "server_id", "server_name", "version", "proto", "go", "host", "port", "headers", "max_payload");

    /// <summary>Go's connectInfo (route.go), which gateways send too.</summary>
    public static readonly JsonTypeInfo<PeerConnect> RouteConnect = Shape<PeerConnect>(
        ["echo", "verbose", "pedantic", "user", "pass", "tls_required", "headers", "name", "cluster", "cluster_dynamic", "lnoc", "gateway"],
        "echo", "verbose", "pedantic", "tls_required", "headers", "name", "cluster");

    /// <summary>Go's leafConnectInfo (leafnode.go).</summary>
    public static readonly JsonTypeInfo<PeerConnect> LeafConnect = Shape<PeerConnect>(
        ["version", "jwt", "sig", "user", "pass", "tls_required", "server_id", "domain", "name", "is_hub", "cluster", "headers", "jetstream",
            "deny_pub", "gateway"],
        "tls_required");

    /// <summary><paramref name="verb"/>, the JSON, and the CRLF (with Go's space before it when asked).</summary>
    public static byte[] WriteLine<T>(ReadOnlySpan<byte> verb, T value, JsonTypeInfo<T> type, bool spaceBeforeCrLf)
    {
        var buffer = new ArrayBufferWriter<byte>(512);
        buffer.Write(verb);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            JsonSerializer.Serialize(json, value, type);
        }
        buffer.Write(spaceBeforeCrLf ? " \r\n"u8 : "\r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Null when <paramref name="json"/> is not one JSON object of the type's fields (as Go's json.Unmarshal errs).</summary>
    public static T? Read<T>(ReadOnlySpan<byte> json, JsonTypeInfo<T> type) where T : class
    {
        try
        {
            return JsonSerializer.Deserialize(json, type);
        }
        catch (Exception e) when (e is JsonException or FormatException)
        {
            return null;
        }
    }

    /// <param name="fields">The struct's JSON names in its order; null for every property in declaration order.</param>
    /// <param name="always">The fields without omitempty.</param>
    private static JsonTypeInfo<T> Shape<T>(string[]? fields, params string[] always)
    {
        var options = new JsonSerializerOptions
        {
            TypeInfoResolver = PeerJsonContext.Default.WithAddedModifier(info =>
            {
                if (info.Type != typeof(T))
                {
                    return;
                }
                var kept = info.Properties.Where(p => fields is null || fields.Contains(p.Name)).ToList();
                if (fields is not null)
                {
                    kept.Sort((a, b) => Array.IndexOf(fields, a.Name).CompareTo(Array.IndexOf(fields, b.Name)));
                }
                info.Properties.Clear();
                for (var i = 0; i < kept.Count; i++)
                {
                    var property = kept[i];
                    property.Order = i;
                    property.ShouldSerialize = always.Contains(property.Name) ? null : NotEmpty;
                    info.Properties.Add(property);
                }
            }),
        };
        return (JsonTypeInfo<T>)options.GetTypeInfo(typeof(T));
    }

    private static bool NotEmpty(object owner, object? value) => value switch
    {
        null => false,
        string text => text.Length != 0,
        bool flag => flag,
        int number => number != 0,
        ulong number => number != 0,
        byte number => number != 0,
        ICollection items => items.Count != 0,
        _ => true,
    };
}
