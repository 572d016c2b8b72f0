using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>Claims JSON; Go's encoding/json matches field names case-insensitively, so does this.</summary>
[JsonSourceGenerationOptions(PropertyNameCaseInsensitive = true, DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingDefault)]
[JsonSerializable(typeof(JwtHeader))]
[JsonSerializable(typeof(ClaimKind))]
[JsonSerializable(typeof(UserClaims))]
[JsonSerializable(typeof(AccountClaims))]
[JsonSerializable(typeof(OperatorClaims))]
[JsonSerializable(typeof(ActivationClaims))]
[JsonSerializable(typeof(UserScope))]
internal sealed partial class JwtJsonContext : JsonSerializerContext;

internal sealed class JwtHeader
{
    [JsonPropertyName("typ")]
    public string? Type { get; set; }

    [JsonPropertyName("alg")]
    public string? Algorithm { get; set; }
}

/// <summary>Go's identifier: just enough of a payload to know its kind and version.</summary>
internal sealed class ClaimKind
{
    [JsonPropertyName("type")]
    public string? V1Type { get; set; }

    [JsonPropertyName("nats")]
    public KindSection? Nats { get; set; }

    public string? Kind => !string.IsNullOrEmpty(V1Type) ? V1Type : Nats?.Type;

    public int Version => !string.IsNullOrEmpty(V1Type) ? 1 : Nats?.Version ?? 0;
}

internal sealed class KindSection
{
    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}
