using System.Text.Json;
using System.Text.Json.Serialization;
using Nats.Storage;

namespace Nats.Server.JetStream.Api;

[JsonConverter(typeof(RetentionConverter))]
internal enum RetentionPolicy { Limits, Interest, WorkQueue }

/// <summary>Unset is Go's zero StorageType, which stream defaults turn into file.</summary>
[JsonConverter(typeof(StorageConverter))]
internal enum StorageKind { Unset, File, Memory }

/// <summary>Go's UnmarshalJSON of these enums: exact names (discard case-insensitively), anything else fails the request as invalid JSON.</summary>
internal sealed class RetentionConverter : JsonConverter<RetentionPolicy>
{
    public override RetentionPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String ? reader.GetString() switch
        {
            "limits" => RetentionPolicy.Limits,
            "interest" => RetentionPolicy.Interest,
            "workqueue" => RetentionPolicy.WorkQueue,
            _ => throw new JsonException("can not unmarshal retention"),
        } : throw new JsonException("can not unmarshal retention");

    public override void Write(Utf8JsonWriter writer, RetentionPolicy value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value switch { RetentionPolicy.Interest => "interest", RetentionPolicy.WorkQueue => "workqueue", _ => "limits" });
}

/// <summary>The store's <see cref="DiscardPolicy"/> as Go's JSON spells it (on <see cref="StreamConfig.Discard"/>: the store knows no JSON).</summary>
internal sealed class DiscardConverter : JsonConverter<DiscardPolicy>
{
    public override DiscardPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String ? reader.GetString()?.ToLowerInvariant() switch
        {
            "old" => DiscardPolicy.Old,
            "new" => DiscardPolicy.New,
            _ => throw new JsonException("can not unmarshal discard"),
        } : throw new JsonException("can not unmarshal discard");

    public override void Write(Utf8JsonWriter writer, DiscardPolicy value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value == DiscardPolicy.New ? "new" : "old");
}

internal sealed class StorageConverter : JsonConverter<StorageKind>
{
    public override StorageKind Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.String ? reader.GetString() switch
        {
            "file" => StorageKind.File,
            "memory" => StorageKind.Memory,
            _ => throw new JsonException("can not unmarshal storage"),
        } : throw new JsonException("can not unmarshal storage");

    public override void Write(Utf8JsonWriter writer, StorageKind value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value == StorageKind.Memory ? "memory" : "file");
}
