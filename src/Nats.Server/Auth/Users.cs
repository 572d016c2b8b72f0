namespace Nats.Server.Auth;

/// <summary>A username/password user of the authorization users list (password may be a bcrypt hash).</summary>
public sealed class User
{
    public required string Username { get; set; }
    public string Password { get; set; } = "";
    public Permissions? Permissions { get; set; }

    /// <summary>Account the user belongs to; null means the global account.</summary>
    public string? Account { get; set; }
}

/// <summary>An nkey user: authenticates by signing the server's nonce with the key's seed.</summary>
public sealed class NkeyUser
{
    /// <summary>Public user nkey ("U..." base32).</summary>
    public required string Nkey { get; set; }
    public Permissions? Permissions { get; set; }
    public string? Account { get; set; }
}
