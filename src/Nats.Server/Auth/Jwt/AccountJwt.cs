namespace Nats.Server.Auth.Jwt;

/// <summary>
/// What an account JWT decides at login time (Go's Account fields set by UpdateAccountClaims): who may
/// sign its users, which users are revoked, whether bearer tokens are refused and when it expires.
/// Immutable; an update replaces the whole object.
/// </summary>
internal sealed class AccountJwt
{
    private readonly Dictionary<string, UserScope?> _signers;

    /// <param name="claims">The verified claims.</param>
    /// <param name="strict">The operator requires signing keys: the account key itself may not sign users.</param>
    public AccountJwt(AccountClaims claims, bool strict)
    {
        Claims = claims;
        _signers = new Dictionary<string, UserScope?>(claims.Nats.SigningKeys, StringComparer.Ordinal);
        if (!strict)
        {
            _signers[claims.Subject] = null;
        }
        Revocations = claims.Nats.Revocations ?? [];
    }

    public AccountClaims Claims { get; }

    public string Token => Claims.Token;

    public IReadOnlyDictionary<string, long> Revocations { get; }

    public bool DisallowBearer => Claims.Nats.Limits.DisallowBearer;

    /// <summary>Go's extAuth: the account's auth callout, when its authorization block names auth users.</summary>
    public ExternalAuthorization? ExternalAuth => Claims.Nats.Authorization is { IsEnabled: true } auth ? auth : null;

    /// <summary>Go's checkExpiration: expired from the second the exp claim names.</summary>
    public bool IsExpired(long now) => Claims.Expires != 0 && Claims.Expires <= now;

    /// <summary>Go's hasIssuer: the account key (unless strict) or one of its signing keys, with its scope if any.</summary>
    public bool HasIssuer(string issuer, out UserScope? scope) => _signers.TryGetValue(issuer, out scope);

    /// <summary>Go's isRevoked: a revocation covers JWTs issued at or before its time; "*" covers every user.</summary>
    public bool IsUserRevoked(string userKey, long issuedAt) => IsRevoked(Revocations, userKey, issuedAt);

    public static bool IsRevoked(IReadOnlyDictionary<string, long> revocations, string subject, long issuedAt)
    {
        if (revocations.Count == 0)
        {
            return false;
        }
        if (!revocations.TryGetValue("*", out var at) || at < issuedAt)
        {
            if (!revocations.TryGetValue(subject, out at))
            {
                return false;
            }
        }
        return at >= issuedAt;
    }
}
