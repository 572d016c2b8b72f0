using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Nats.Server.Accounts;

namespace Nats.Server.JetStream.Api;

/// <summary>One $JS.API request: the subject with any domain removed, its body, and where to answer.</summary>
internal sealed class ApiRequest
{
    public required JsAccount? JsAccount { get; init; }
    public required Account Account { get; init; }

    /// <summary>The subject in the <c>$JS.API.</c> form.</summary>
    public required string Subject { get; init; }
    public required byte[] Reply { get; init; }
    public required byte[] Body { get; init; }

    /// <summary>The requesting client (null for requests made inside the server).</summary>
    public Clients.ClientConnection? Origin { get; init; }

    /// <summary>The subject as sent (with its domain, if any).</summary>
    public string? RawSubject { get; init; }

    public string Token(int index)
    {
        var tokens = Subject.Split('.');
        return index < tokens.Length ? tokens[index] : "";
    }

    /// <summary>Go's isEmptyRequest: no bytes, or JSON that is an empty object.</summary>
    public bool IsEmpty
    {
        get
        {
            var span = Body.AsSpan().Trim(" \t\r\n"u8);
            if (span.IsEmpty)
            {
                return true;
            }
            try
            {
                using var doc = JsonDocument.Parse(Body);
                return doc.RootElement.ValueKind == JsonValueKind.Object && !doc.RootElement.EnumerateObject().Any();
            }
            catch (JsonException)
            {
                return false;
            }
        }
    }

    /// <summary>Go's json.Unmarshal: any failure is "invalid JSON" for the caller.</summary>
    public bool TryParse<T>(JsonTypeInfo<T> type, out T? value)
    {
        try
        {
            value = JsonSerializer.Deserialize(Body, type);
            return value is not null;
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or NotSupportedException or ArgumentException)
        {
            value = default;
            return false;
        }
    }
}
