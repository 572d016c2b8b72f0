using System.Text.Json;

namespace Nats.Server.Protocol;

/// <summary>
/// The client's CONNECT options. Defaults are the Go server's (verbose, pedantic and echo on), and
/// a CONNECT only overwrites the fields it names, exactly like json.Unmarshal into c.opts in Go.
/// </summary>
internal sealed class ConnectOptions
{
    public bool Verbose { get; set; } = true;
    public bool Pedantic { get; set; } = true;
    public bool Echo { get; set; } = true;
    public bool TlsRequired { get; set; }
    public bool Headers { get; set; }
    public bool NoResponders { get; set; }
    public int Protocol { get; set; }
    public string? AuthToken { get; set; }
    public string? User { get; set; }
    public string? Pass { get; set; }
    public string? Name { get; set; }
    public string? Lang { get; set; }
    public string? Version { get; set; }
    public string? Nkey { get; set; }
    public string? Sig { get; set; }
    public string? Jwt { get; set; }
    public string? Account { get; set; }
    public bool NewAccount { get; set; }

    /// <summary>Applies a CONNECT payload; false when it is not a JSON object of the right shape.</summary>
    public bool TryApply(ReadOnlySpan<byte> json)
    {
        try
        {
            var reader = new Utf8JsonReader(json, new JsonReaderOptions { AllowTrailingCommas = false, CommentHandling = JsonCommentHandling.Disallow });
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                return false;
            }
            while (reader.Read())
            {
                if (reader.TokenType == JsonTokenType.EndObject)
                {
                    // Go's decoder rejects trailing data after the object.
                    return !reader.Read();
                }
                if (reader.TokenType != JsonTokenType.PropertyName)
                {
                    return false;
                }
                // encoding/json matches field names case-insensitively.
                var name = reader.GetString()!.ToLowerInvariant();
                if (!reader.Read())
                {
                    return false;
                }
                if (!ApplyField(name, ref reader))
                {
                    return false;
                }
            }
            return false;
        }
        catch (JsonException)
        {
            return false;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }

    private bool ApplyField(string name, ref Utf8JsonReader reader)
    {
        switch (name)
        {
            case "verbose": return ReadBool(ref reader, v => Verbose = v);
            case "pedantic": return ReadBool(ref reader, v => Pedantic = v);
            case "echo": return ReadBool(ref reader, v => Echo = v);
            case "tls_required": return ReadBool(ref reader, v => TlsRequired = v);
            case "headers": return ReadBool(ref reader, v => Headers = v);
            case "no_responders": return ReadBool(ref reader, v => NoResponders = v);
            case "new_account": return ReadBool(ref reader, v => NewAccount = v);
            case "protocol":
                if (reader.TokenType == JsonTokenType.Null)
                {
                    return true;
                }
                if (reader.TokenType != JsonTokenType.Number || !reader.TryGetInt32(out var protocol))
                {
                    return false;
                }
                Protocol = protocol;
                return true;
            case "auth_token": return ReadString(ref reader, v => AuthToken = v);
            case "user": return ReadString(ref reader, v => User = v);
            case "pass": return ReadString(ref reader, v => Pass = v);
            case "name": return ReadString(ref reader, v => Name = v);
            case "lang": return ReadString(ref reader, v => Lang = v);
            case "version": return ReadString(ref reader, v => Version = v);
            case "nkey": return ReadString(ref reader, v => Nkey = v);
            case "sig": return ReadString(ref reader, v => Sig = v);
            case "jwt": return ReadString(ref reader, v => Jwt = v);
            case "account": return ReadString(ref reader, v => Account = v);
            default:
                reader.Skip();
                return true;
        }
    }

    private static bool ReadBool(ref Utf8JsonReader reader, Action<bool> set)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.True:
                set(true);
                return true;
            case JsonTokenType.False:
                set(false);
                return true;
            case JsonTokenType.Null:
                return true;
            default:
                return false;
        }
    }

    private static bool ReadString(ref Utf8JsonReader reader, Action<string?> set)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.String:
                set(reader.GetString());
                return true;
            case JsonTokenType.Null:
                return true;
            default:
                return false;
        }
    }
}
