using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.Monitoring;

/// <summary>
/// Source-generated serialization for every monitoring document. Indented with two spaces like Go's
/// json.MarshalIndent; relaxed escaping so "µs" in RTTs is written as is, like Go.
/// </summary>
[JsonSourceGenerationOptions(
    WriteIndented = true,
    Converters = [typeof(GoTimeConverter), typeof(NullableGoTimeConverter)])]
[JsonSerializable(typeof(Varz))]
[JsonSerializable(typeof(Connz))]
[JsonSerializable(typeof(Subsz))]
[JsonSerializable(typeof(SubListStatsModel))]
[JsonSerializable(typeof(Routez))]
[JsonSerializable(typeof(Gatewayz))]
[JsonSerializable(typeof(GatewayConnInfo))]
[JsonSerializable(typeof(Leafz))]
[JsonSerializable(typeof(Accountz))]
[JsonSerializable(typeof(AccountInfo))]
[JsonSerializable(typeof(AccountStatz))]
[JsonSerializable(typeof(Jsz))]
[JsonSerializable(typeof(HealthStatus))]
internal sealed partial class MonitorJsonContext : JsonSerializerContext
{
    private static readonly JsonSerializerOptions IndentedOptions = new()
    {
        WriteIndented = true,
        IndentSize = 2,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        Converters = { new GoTimeConverter(), new NullableGoTimeConverter() },
    };

    private static readonly JsonSerializerOptions CompactOptions = new(IndentedOptions) { WriteIndented = false };

    /// <summary>The context used for responses (indented, like the Go server's MarshalIndent).</summary>
    public static MonitorJsonContext Indented { get; } = new(IndentedOptions);

    /// <summary>/healthz is the one endpoint Go writes without indentation.</summary>
    public static MonitorJsonContext Compact { get; } = new(CompactOptions);
}

/// <summary>Times as Go writes them: UTC, RFC 3339 with trailing fractional zeros trimmed.</summary>
internal sealed class GoTimeConverter : JsonConverter<DateTime>
{
    public override DateTime Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        DateTime.Parse(reader.GetString()!, System.Globalization.CultureInfo.InvariantCulture,
            System.Globalization.DateTimeStyles.AdjustToUniversal | System.Globalization.DateTimeStyles.AssumeUniversal);

    public override void Write(Utf8JsonWriter writer, DateTime value, JsonSerializerOptions options) =>
        writer.WriteStringValue(GoFormat.Time(value));
}

internal sealed class NullableGoTimeConverter : JsonConverter<DateTime?>
{
    public override DateTime? Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        reader.TokenType == JsonTokenType.Null ? null : new GoTimeConverter().Read(ref reader, typeof(DateTime), options);

    public override void Write(Utf8JsonWriter writer, DateTime? value, JsonSerializerOptions options)
    {
        if (value is { } time)
        {
            writer.WriteStringValue(GoFormat.Time(time));
        }
        else
        {
            writer.WriteNullValue();
        }
    }
}
