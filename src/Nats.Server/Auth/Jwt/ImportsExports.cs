using System.Text.Json.Serialization;

namespace Nats.Server.Auth.Jwt;

/// <summary>jwt.Export: a stream or service the account offers, public or behind activation tokens.</summary>
internal sealed class JwtExport
{
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    /// <summary>"stream" or "service".</summary>
    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("token_req")]
    public bool TokenRequired { get; set; }

    [JsonPropertyName("revocations")]
    public Dictionary<string, long>? Revocations { get; set; }

    /// <summary>"Singleton" (also when empty), "Stream" or "Chunked".</summary>
    [JsonPropertyName("response_type")]
    public string? ResponseType { get; set; }

    [JsonPropertyName("response_threshold")]
    public long ResponseThresholdNanos { get; set; }

    [JsonPropertyName("account_token_position")]
    public uint AccountTokenPosition { get; set; }

    [JsonPropertyName("advertise")]
    public bool Advertise { get; set; }

    [JsonIgnore]
    public bool IsService => Type == "service";

    [JsonIgnore]
    public bool IsStream => Type == "stream";
}

/// <summary>jwt.Import: another account's export brought in, with an activation token when the export requires one.</summary>
internal sealed class JwtImport
{
    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("subject")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("account")]
    public string Account { get; set; } = "";

    [JsonPropertyName("token")]
    public string? Token { get; set; }

    /// <summary>Deprecated in favour of local_subject; for streams a prefix.</summary>
    [JsonPropertyName("to")]
    public string? To { get; set; }

    [JsonPropertyName("local_subject")]
    public string? LocalSubject { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("share")]
    public bool Share { get; set; }

    [JsonIgnore]
    public bool IsService => Type == "service";

    [JsonIgnore]
    public bool IsStream => Type == "stream";
}
