using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Nats.Server.Accounts;
using Nats.Subjects;

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

    /// <summary>The zero-based <paramref name="index"/>-th token, "" when there is none.</summary>
    public string Token(int index) => SubjectTokens.TokenAt(Subject, index + 1);

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
