using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// A scoped signing key (jwt.UserScope): users it signs must carry no permissions or limits of their
/// own and get this template instead.
/// </summary>
internal sealed class UserScope
{
    [JsonPropertyName("kind")]
    public string Kind { get; set; } = "user_scope";

    [JsonPropertyName("key")]
    public string Key { get; set; } = "";

    [JsonPropertyName("role")]
    public string? Role { get; set; }

    /// <summary>Go's NewUserScope presets subs/data/payload to -1 before reading, so an absent limit is none.</summary>
    [JsonPropertyName("template")]
    [JsonObjectCreationHandling(JsonObjectCreationHandling.Populate)]
    public JwtUserPermissionLimits Template { get; set; } = new() { Subs = JwtLimits.NoLimit, Data = JwtLimits.NoLimit, Payload = JwtLimits.NoLimit };
}

/// <summary>
/// Go's SigningKeys JSON: an array whose items are either a public key or a scope object; an object
/// of another kind fails the whole claim.
/// </summary>
internal sealed class SigningKeysConverter : JsonConverter<Dictionary<string, UserScope?>>
{
    public override Dictionary<string, UserScope?> Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        var keys = new Dictionary<string, UserScope?>(StringComparer.Ordinal);
        if (reader.TokenType == JsonTokenType.Null)
        {
            return keys;
        }
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            throw new JsonException("json: cannot unmarshal signing keys");
        }
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            switch (reader.TokenType)
            {
                case JsonTokenType.String:
                    keys[reader.GetString()!] = null;
                    break;
                case JsonTokenType.StartObject:
                    using (var item = JsonDocument.ParseValue(ref reader))
                    {
                        var kind = item.RootElement.TryGetProperty("kind", out var k) && k.ValueKind == JsonValueKind.String ? k.GetString() : null;
                        if (kind != "user_scope")
                        {
                            throw new JsonException("unknown signing key scope");
                        }
                        var scope = item.RootElement.Deserialize(JwtJsonContext.Default.UserScope)!;
                        keys[scope.Key] = scope;
                    }
                    break;
                default:
                    // Go skips numbers, booleans and nulls in the array.
                    reader.Skip();
                    break;
            }
        }
        return keys;
    }

    public override void Write(Utf8JsonWriter writer, Dictionary<string, UserScope?> value, JsonSerializerOptions options)
    {
        writer.WriteStartArray();
        foreach (var (key, scope) in value)
        {
            if (scope is null)
            {
                writer.WriteStringValue(key);
            }
            else
            {
                JsonSerializer.Serialize(writer, scope, JwtJsonContext.Default.UserScope);
            }
        }
        writer.WriteEndArray();
    }
}
