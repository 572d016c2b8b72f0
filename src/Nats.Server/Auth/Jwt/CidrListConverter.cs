using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>Go's CIDRList: an array of CIDRs or one comma-separated string (lower-cased, trimmed, de-duplicated).</summary>
internal sealed class CidrListConverter : JsonConverter<List<string>?>
{
    public override bool HandleNull => true;

    public override List<string>? Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.Null:
                return null;
            case JsonTokenType.String:
                var list = new List<string>();
                foreach (var part in reader.GetString()!.ToLowerInvariant().Split(','))
                {
                    var item = part.Trim();
                    if (item.Length > 0 && !list.Contains(item))
                    {
                        list.Add(item);
                    }
                }
                return list;
            case JsonTokenType.StartArray:
                var items = new List<string>();
                while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
                {
                    items.Add(reader.TokenType == JsonTokenType.String ? reader.GetString()! : throw new JsonException("json: cannot unmarshal src"));
                }
                return items;
            default:
                throw new JsonException("json: cannot unmarshal src");
        }
    }

    public override void Write(Utf8JsonWriter writer, List<string>? value, JsonSerializerOptions options)
    {
        if (value is null)
        {
            writer.WriteNullValue();
            return;
        }
        writer.WriteStartArray();
        foreach (var item in value)
        {
            writer.WriteStringValue(item);
        }
        writer.WriteEndArray();
    }
}
