namespace Nats.Server.Auth;

/// <summary>A username/password user of the authorization users list (password may be a bcrypt hash).</summary>
public sealed class User
{
    public required string Username { get; set; }
    public string Password { get; set; } = "";
    public Permissions? Permissions { get; set; }

    /// <summary>Account the user belongs to; null means the global account.</summary>
    public string? Account { get; set; }

    /// <summary>allowed_connection_types (e.g. STANDARD, WEBSOCKET, MQTT); null or empty allows all.</summary>
    public List<string>? AllowedConnectionTypes { get; set; }
}

/// <summary>An nkey user: authenticates by signing the server's nonce with the key's seed.</summary>
public sealed class NkeyUser
{
    /// <summary>Public user nkey ("U..." base32).</summary>
    public required string Nkey { get; set; }
    public Permissions? Permissions { get; set; }
    public string? Account { get; set; }
    public List<string>? AllowedConnectionTypes { get; set; }
}

/// <summary>Connection type names of allowed_connection_types (jwt.ConnectionType* in Go).</summary>
internal static class ConnectionTypes
{
    public const string Standard = "STANDARD";
    public const string Websocket = "WEBSOCKET";
    public const string Leafnode = "LEAFNODE";
    public const string LeafnodeWebsocket = "LEAFNODE_WS";
    public const string Mqtt = "MQTT";
    public const string MqttWebsocket = "MQTT_WS";

    public static bool IsKnown(string upperCaseName) =>
        upperCaseName is Standard or Websocket or Leafnode or LeafnodeWebsocket or Mqtt or MqttWebsocket;

    /// <summary>Go's connectionTypeAllowed: an empty list allows every type; names compare upper-cased.</summary>
    public static bool Allows(List<string>? allowed, string connectionType) =>
        allowed is not { Count: > 0 } || allowed.Any(t => string.Equals(t, connectionType, StringComparison.OrdinalIgnoreCase));
}
