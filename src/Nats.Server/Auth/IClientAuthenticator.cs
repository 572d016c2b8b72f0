using Nats.Server.Protocol;

namespace Nats.Server.Auth;

/// <summary>
/// Decides whether a CONNECT may proceed and as whom. The options-based implementation covers
/// tokens, users, nkeys and no_auth_user; JWT/operator mode plugs in as another implementation.
/// </summary>
internal interface IClientAuthenticator
{
    /// <summary>Advertised in INFO; when false every client is accepted without looking at credentials.</summary>
    bool AuthRequired { get; }

    /// <summary>
    /// INFO's auth_required. Go clears it when a no_auth_user exists (clients may connect without
    /// credentials) while still requiring CONNECT before anything else.
    /// </summary>
    bool AdvertiseAuthRequired { get; }

    /// <summary>When true each client's INFO carries a random nonce for nkey/JWT signatures.</summary>
    bool NonceRequired { get; }

    /// <summary>The authenticated identity, or null for an authorization violation.</summary>
    AuthenticatedUser? Authenticate(in ClientAuthRequest request);
}

/// <summary>What the authenticator gets to see: the client's CONNECT options, the nonce it was sent and its connection type.</summary>
internal readonly record struct ClientAuthRequest(ConnectOptions Connect, string? Nonce, string RemoteIp, string ConnectionType = ConnectionTypes.Standard)
{
    /// <summary>The connection, as log lines name it ("ip:port - cid:N"), for authenticators that log why they refuse.</summary>
    public object? Client { get; init; }

    /// <summary>The client's TLS certificate, for verify_and_map.</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? PeerCertificate { get; init; }
}

/// <summary>
/// An authenticated client identity: name for logs and monitoring, the account it is bound to and its
/// compiled permissions (null means unrestricted).
/// </summary>
internal sealed class AuthenticatedUser
{
    public static readonly AuthenticatedUser Anonymous = new(AuthMethod.None, null, null, null);

    public AuthenticatedUser(AuthMethod method, string? name, string? account, CompiledPermissions? permissions)
    {
        Method = method;
        Name = name;
        Account = string.IsNullOrEmpty(account) ? Accounts.Account.GlobalAccountName : account;
        Permissions = permissions;
    }

    public AuthMethod Method { get; }
    public string? Name { get; }
    public string Account { get; }
    public CompiledPermissions? Permissions { get; }

    /// <summary>A user JWT's own payload limit (-1: none); the account's and the server's still apply.</summary>
    public int MaxPayload { get; init; } = -1;

    /// <summary>A user JWT's own subscription limit (-1: none).</summary>
    public int MaxSubscriptions { get; init; } = -1;

    /// <summary>When the login stops being valid (user JWT expiry or the end of its connect window); null: never.</summary>
    public TimeSpan? ValidFor { get; init; }

    /// <summary>A user JWT's claims, kept for revocation and account updates.</summary>
    public Jwt.UserClaims? JwtClaims { get; init; }

    /// <summary>Set when the auth callout admitted the client: the admitted user JWT's name ("" when it has none).</summary>
    public string? CalloutName { get; init; }

    /// <summary>The same identity with other permissions.</summary>
    public AuthenticatedUser WithPermissions(CompiledPermissions? permissions) => new(Method, Name, Account, permissions)
    {
        MaxPayload = MaxPayload,
        MaxSubscriptions = MaxSubscriptions,
        ValidFor = ValidFor,
        JwtClaims = JwtClaims,
        CalloutName = CalloutName,
    };

    /// <summary>Go's getAuthUser, used in violation log lines.</summary>
    public string Description => Method switch
    {
        AuthMethod.Nkey => $"Nkey \"{Name}\"",
        AuthMethod.Token => "Token",
        AuthMethod.Jwt => $"JWT User \"{Name}\"",
        AuthMethod.None => "User \"\"",
        _ => $"User \"{Name}\"",
    };
}

internal enum AuthMethod
{
    None,
    Token,
    UserPassword,
    Nkey,
    Jwt,
}
