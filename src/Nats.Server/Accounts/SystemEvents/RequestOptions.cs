using System.Text.Json;

namespace Nats.Server.Accounts.SystemEvents;

internal enum OptionKind
{
    Bool,
    Int,
    UInt,
    String,
    StringArray,
}

/// <summary>
/// The JSON body of a $SYS request decoded like Go's json.Unmarshal into the endpoint's options
/// struct (for example ConnzEventOptions): field names match case-insensitively, unknown fields are
/// ignored, a wrong type fails the whole request with Go's "cannot unmarshal" text.
/// </summary>
internal sealed class RequestOptions
{
    /// <summary>The EventFilterOptions every request embeds.</summary>
    public static readonly IReadOnlyDictionary<string, OptionKind> FilterFields = new Dictionary<string, OptionKind>
    {
        ["server_name"] = OptionKind.String,
        ["cluster"] = OptionKind.String,
        ["host"] = OptionKind.String,
        ["tags"] = OptionKind.StringArray,
        ["domain"] = OptionKind.String,
    };

    private readonly Dictionary<string, JsonElement> _values = new(StringComparer.OrdinalIgnoreCase);

    private RequestOptions()
    {
    }

    public static RequestOptions Empty { get; } = new();

    /// <summary>Decodes <paramref name="body"/>; <paramref name="structName"/> names the Go type in errors.</summary>
    public static bool TryParse(ReadOnlySpan<byte> body, string structName, IReadOnlyDictionary<string, OptionKind> fields,
        out RequestOptions options, out string error)
    {
        options = new RequestOptions();
        error = "";
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(body.ToArray());
        }
        catch (JsonException ex)
        {
            error = GoSyntaxError(body, ex);
            return false;
        }
        using (document)
        {
            var root = document.RootElement;
            if (root.ValueKind == JsonValueKind.Null)
            {
                return true;
            }
            if (root.ValueKind != JsonValueKind.Object)
            {
                error = $"json: cannot unmarshal {GoTypeName(root)} into Go value of type server.{structName}";
                return false;
            }
            foreach (var property in root.EnumerateObject())
            {
                if (!TryKind(property.Name, fields, out var name, out var kind))
                {
                    continue;
                }
                var value = property.Value;
                if (value.ValueKind == JsonValueKind.Null)
                {
                    continue;
                }
                if (!Fits(value, kind))
                {
                    // Go quotes the number only when it was meant for a number field (overflow, fraction, sign).
                    var valueName = value.ValueKind == JsonValueKind.Number && kind is not (OptionKind.Int or OptionKind.UInt) ? "number" : GoTypeName(value);
                    error = $"json: cannot unmarshal {valueName} into Go struct field {structName}.{name} of type {GoKindName(kind)}";
                    return false;
                }
                options._values[name] = value.Clone();
            }
        }
        return true;
    }

    public bool Bool(string name) => _values.TryGetValue(name, out var v) && v.ValueKind == JsonValueKind.True;

    public int Int(string name) => _values.TryGetValue(name, out var v) ? v.GetInt32() : 0;

    public ulong UInt(string name) => _values.TryGetValue(name, out var v) ? v.GetUInt64() : 0;

    public string String(string name) => _values.TryGetValue(name, out var v) ? v.GetString() ?? "" : "";

    public string[] Strings(string name) =>
        _values.TryGetValue(name, out var v) ? [.. v.EnumerateArray().Select(e => e.GetString() ?? "")] : [];

    private static bool TryKind(string jsonName, IReadOnlyDictionary<string, OptionKind> fields, out string name, out OptionKind kind)
    {
        foreach (var (fieldName, fieldKind) in fields.Concat(FilterFields))
        {
            if (string.Equals(fieldName, jsonName, StringComparison.OrdinalIgnoreCase))
            {
                name = fieldName;
                kind = fieldKind;
                return true;
            }
        }
        name = "";
        kind = default;
        return false;
    }

    private static bool Fits(JsonElement value, OptionKind kind) => kind switch
    {
        OptionKind.Bool => value.ValueKind is JsonValueKind.True or JsonValueKind.False,
        OptionKind.Int => value.ValueKind == JsonValueKind.Number && value.TryGetInt32(out _),
        OptionKind.UInt => value.ValueKind == JsonValueKind.Number && value.TryGetUInt64(out _),
        OptionKind.String => value.ValueKind == JsonValueKind.String,
        OptionKind.StringArray => value.ValueKind == JsonValueKind.Array && value.EnumerateArray().All(e => e.ValueKind is JsonValueKind.String or JsonValueKind.Null),
        _ => false,
    };

    private static string GoTypeName(JsonElement value) => value.ValueKind switch
    {
        JsonValueKind.String => "string",
        JsonValueKind.Number => "number " + value.GetRawText(),
        JsonValueKind.True or JsonValueKind.False => "bool",
        JsonValueKind.Array => "array",
        JsonValueKind.Object => "object",
        _ => "null",
    };

    private static string GoKindName(OptionKind kind) => kind switch
    {
        OptionKind.Bool => "bool",
        OptionKind.Int => "int",
        OptionKind.UInt => "uint64",
        OptionKind.String => "string",
        _ => "[]string",
    };

    /// <summary>Go's encoding/json SyntaxError texts for the common cases; the offending byte is quoted like Go's quoteChar.</summary>
    private static string GoSyntaxError(ReadOnlySpan<byte> body, JsonException ex)
    {
        var position = (int)Math.Min(ex.BytePositionInLine ?? 0, body.Length);
        if (position >= body.Length)
        {
            return "unexpected end of JSON input";
        }
        var c = (char)body[position];
        var quoted = c == '\'' ? "'\\''" : c == '"' ? "'\"'" : $"'{c}'";
        var before = position > 0 ? body[..position].TrimEnd(" \t\r\n"u8) : default;
        var context = before.IsEmpty ? "looking for beginning of value"
            : before[^1] is (byte)'{' or (byte)',' ? "looking for beginning of object key string"
            : before[^1] == (byte)':' ? "looking for beginning of value"
            : "after object key:value pair";
        return $"invalid character {quoted} {context}";
    }
}
