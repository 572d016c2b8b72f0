using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using NATS.NKeys;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// nats-io/jwt v2's Decode: three base64url chunks, a JWT/ed25519-nkey header, claims whose kind and
/// version are read first, and an ed25519 signature over "header.payload" by the issuer's nkey, whose
/// prefix must suit the kind. Failures are <see cref="JwtException"/>s with the library's texts.
/// </summary>
internal static partial class JwtDecoder
{
    private const int LibraryVersion = 2;

    public static UserClaims DecodeUser(string token) => Decode(token) as UserClaims ?? throw new JwtException("not user claim");

    public static AccountClaims DecodeAccount(string token) => Decode(token) as AccountClaims ?? throw new JwtException("not account claim");

    public static OperatorClaims DecodeOperator(string token) => Decode(token) as OperatorClaims ?? throw new JwtException("not operator claim");

    public static ActivationClaims DecodeActivation(string token) => Decode(token) as ActivationClaims ?? throw new JwtException("not activation claim");

    public static JwtClaims Decode(string token)
    {
        var chunks = token.Split('.');
        if (chunks.Length != 3)
        {
            throw new JwtException("expected 3 chunks");
        }
        ParseHeader(chunks[0]);
        var payload = DecodeChunk(chunks[1]);
        var claims = LoadClaims(payload);
        claims.Token = token;
        var signature = DecodeChunk(chunks[2]);
        // v2 signs the header and the payload.
        if (!NKeys.Verify(claims.Issuer, Encoding.ASCII.GetBytes(token, 0, chunks[0].Length + 1 + chunks[1].Length), signature))
        {
            throw new JwtException("claim failed V2 signature verification");
        }
        var (allowed, names) = claims switch
        {
            UserClaims => ((PrefixByte[])[PrefixByte.Account], "[account]"),
            OperatorClaims => ([PrefixByte.Operator], "[operator]"),
            _ => ([PrefixByte.Account, PrefixByte.Operator], "[account operator]"),
        };
        if (NKeys.PrefixOf(claims.Issuer) is not { } prefix || !allowed.Contains(prefix))
        {
            throw new JwtException($"unable to validate expected prefixes - {names}");
        }
        return claims;
    }

    /// <summary>jwt's parseHeaders; returns the algorithm in lower case.</summary>
    private static string ParseHeader(string chunk)
    {
        var header = Parse(DecodeChunk(chunk), JwtJsonContext.Default.JwtHeader);
        if (!string.Equals(header.Type, "JWT", StringComparison.OrdinalIgnoreCase))
        {
            throw new JwtException($"not supported type {GoQuote.Quote(header.Type ?? "")}");
        }
        var algorithm = (header.Algorithm ?? "").ToLowerInvariant();
        if (algorithm is not ("ed25519" or "ed25519-nkey"))
        {
            throw new JwtException($"unexpected {GoQuote.Quote(header.Algorithm ?? "")} algorithm");
        }
        return algorithm;
    }

    /// <summary>
    /// jwt.DecodeGeneric: any claim kind, read as issuer, subject and the raw "nats" object; the
    /// signature is checked (an old "ed25519" token signs the payload alone) but not the issuer's prefix.
    /// </summary>
    public static GenericClaims DecodeGeneric(string token)
    {
        var chunks = token.Split('.');
        if (chunks.Length != 3)
        {
            throw new JwtException("expected 3 chunks");
        }
        var algorithm = ParseHeader(chunks[0]);
        var payload = DecodeChunk(chunks[1]);
        GenericClaims claims;
        try
        {
            using var json = JsonDocument.Parse(payload);
            if (json.RootElement.ValueKind != JsonValueKind.Object)
            {
                throw new JwtException("json: cannot unmarshal into Go value of type jwt.GenericClaims");
            }
            var root = json.RootElement;
            claims = new GenericClaims(
                root.TryGetProperty("iss", out var iss) ? iss.GetString() ?? "" : "",
                root.TryGetProperty("sub", out var sub) ? sub.GetString() ?? "" : "",
                root.TryGetProperty("nats", out var nats) && nats.ValueKind != JsonValueKind.Null ? nats.Clone() : null)
            {
                Audience = root.TryGetProperty("aud", out var aud) ? aud.GetString() ?? "" : "",
                Expires = root.TryGetProperty("exp", out var exp) ? exp.GetInt64() : 0,
                NotBefore = root.TryGetProperty("nbf", out var nbf) ? nbf.GetInt64() : 0,
            };
            if (claims.Nats is { ValueKind: not JsonValueKind.Object })
            {
                throw new JwtException("json: cannot unmarshal into Go struct field GenericClaims.nats of type map[string]interface {}");
            }
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or FormatException)
        {
            throw new JwtException(e.Message);
        }
        var signature = DecodeChunk(chunks[2]);
        var signed = algorithm == "ed25519"
            ? Encoding.ASCII.GetBytes(chunks[1])
            : Encoding.ASCII.GetBytes(token, 0, chunks[0].Length + 1 + chunks[1].Length);
        if (!NKeys.Verify(claims.Issuer, signed, signature))
        {
            throw new JwtException(algorithm == "ed25519" ? "claim failed V1 signature verification" : "claim failed V2 signature verification");
        }
        return claims;
    }

    private static JwtClaims LoadClaims(byte[] payload)
    {
        var kind = Parse(payload, JwtJsonContext.Default.ClaimKind);
        if (kind.Version > LibraryVersion)
        {
            throw new JwtException("JWT was generated by a newer version ");
        }
        if (kind.Kind is "cluster" or "server")
        {
            throw new JwtException($"{(kind.Kind == "cluster" ? "Cluster" : "Server")}Claims are not supported");
        }
        if (kind.Kind is not ("operator" or "account" or "user" or "activation"))
        {
            throw new JwtException("not a supported claim type");
        }
        if (kind.Version != LibraryVersion)
        {
            // v1 JWTs (nsc before 2.0) are not read by this server yet.
            throw new JwtException($"library supports version {LibraryVersion} or less - received {kind.Version}");
        }
        return kind.Kind switch
        {
            "operator" => Parse(payload, JwtJsonContext.Default.OperatorClaims),
            "account" => Parse(payload, JwtJsonContext.Default.AccountClaims),
            "user" => Parse(payload, JwtJsonContext.Default.UserClaims),
            _ => Parse(payload, JwtJsonContext.Default.ActivationClaims),
        };
    }

    private static T Parse<T>(byte[] json, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type)
    {
        try
        {
            return JsonSerializer.Deserialize(json, type) ?? throw new JwtException("unexpected end of JSON input");
        }
        catch (JsonException e)
        {
            throw new JwtException(e.Message);
        }
    }

    /// <summary>Go's base64.RawURLEncoding: no padding allowed; the error names the first bad byte as Go does.</summary>
    private static byte[] DecodeChunk(string chunk)
    {
        var bad = chunk.AsSpan().IndexOfAnyExcept(Base64UrlAlphabet);
        if (bad >= 0 || chunk.Length % 4 == 1)
        {
            throw new JwtException($"illegal base64 data at input byte {(bad >= 0 ? bad : chunk.Length - 1)}");
        }
        var bytes = Encoding.ASCII.GetBytes(chunk);
        var output = new byte[Base64Url.GetMaxDecodedLength(bytes.Length)];
        if (Base64Url.DecodeFromUtf8(bytes, output, out _, out var written) != System.Buffers.OperationStatus.Done)
        {
            throw new JwtException($"illegal base64 data at input byte {chunk.Length - 1}");
        }
        return output[..written];
    }

    private static readonly System.Buffers.SearchValues<char> Base64UrlAlphabet =
        System.Buffers.SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");

    /// <summary>
    /// Go's ParseDecoratedJWT: the first "-----BEGIN ...-----" block of a creds or JWT file, or the
    /// whole text when it has no decorations.
    /// </summary>
    public static string ParseDecorated(string contents)
    {
        var match = DecoratedBlock().Match(contents);
        return match.Success ? match.Groups[1].Value : contents;
    }

    [GeneratedRegex(@"\s*(?:(?:[-]{3,}.*[-]{3,}\r?\n)([\w\-.=]+)(?:\r?\n[-]{3,}.*[-]{3,}\r?\n))")]
    private static partial Regex DecoratedBlock();
}

/// <summary>A JWT that does not decode or verify; the message is the Go library's.</summary>
internal sealed class JwtException(string message) : Exception(message);

/// <summary>jwt.GenericClaims as the server reads it: who signed, about whom, and the "nats" object.</summary>
internal sealed record GenericClaims(string Issuer, string Subject, JsonElement? Nats)
{
    public string Audience { get; init; } = "";

    public long Expires { get; init; }

    public long NotBefore { get; init; }

    /// <summary>A string member of the "nats" object; empty when absent.</summary>
    public string NatsString(string name) =>
        Nats is { ValueKind: JsonValueKind.Object } nats && nats.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString()! : "";
}
