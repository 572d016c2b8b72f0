using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Accounts;
using Nats.Server.Accounts.Resolvers;
using Nats.Server.Configuration;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Operator mode's side of the account registry: the resolver, the trusted operator keys, and
/// turning a resolved account JWT into an <see cref="Account"/> (Go's fetchAccount,
/// verifyAccountClaims and buildInternalAccount).
/// </summary>
internal sealed class OperatorAccounts
{
    private readonly HashSet<string> _trustedKeys;
    private readonly HashSet<string> _strictSigners;
    private readonly ILogger _logger;

    public OperatorAccounts(OperatorOptions options, ILogger? logger = null)
    {
        _logger = logger ?? NullLogger.Instance;
        _trustedKeys = new HashSet<string>(OperatorValidation.TrustedKeys(options), StringComparer.Ordinal);
        _strictSigners = new HashSet<string>(options.TrustedOperators.Where(o => o.Nats.StrictSigningKeyUsage).SelectMany(o => o.Nats.SigningKeys ?? []), StringComparer.Ordinal);
        Resolver = Create(options.Resolver);
        if (Resolver is UrlAccountResolver url)
        {
            if (options.Preload.Count > 0)
            {
                throw new InvalidOperationException("resolver preloads only available for writeable resolver types MEM/DIR/CACHE_DIR");
            }
            // Go's start-up check that the account server is there: the base URL must answer 200.
            if (url.Fetch("") is null)
            {
                throw new InvalidOperationException(url.LastError);
            }
        }
        StorePreloads(options);
    }

    private void StorePreloads(OperatorOptions options)
    {
        foreach (var (key, jwt) in options.Preload)
        {
            Resolver?.Store(key, jwt);
        }
    }

    /// <summary>
    /// Go's configureResolver on a reload: the preloads go into the resolver again. Go swaps in the new
    /// resolver object, so a MEMORY resolver then holds exactly the new preloads; a changed resolver
    /// type or directory is not taken over here (the running resolver stays).
    /// </summary>
    public void ReloadPreloads(OperatorOptions options)
    {
        if (Resolver is MemoryAccountResolver memory)
        {
            memory.Clear();
        }
        StorePreloads(options);
    }

    /// <summary>Null only when no resolver is configured.</summary>
    public IAccountResolver? Resolver { get; }

    /// <summary>Go's isTrustedIssuer.</summary>
    public bool IsTrustedIssuer(string issuer) => _trustedKeys.Contains(issuer);

    /// <summary>Go's verifyAccountClaims: decodes, checks the issuer is trusted and the claim (times included) valid.</summary>
    public AccountClaims Verify(string jwt)
    {
        var claims = JwtDecoder.DecodeAccount(jwt);
        if (!IsTrustedIssuer(claims.Issuer))
        {
            throw new JwtException(AccountValidationFailed);
        }
        var result = new JwtValidation();
        claims.Validate(result, JwtValidation.Now);
        if (result.IsBlocking(true))
        {
            throw new JwtException(AccountValidationFailed);
        }
        return claims;
    }

    public const string AccountValidationFailed = "account validation failed";

    public const string AccountMissing = "account missing";

    /// <summary>Fetches and verifies an account JWT from the resolver; null with the reason when there is none or it fails.</summary>
    public AccountClaims? Fetch(string accountKey, out string? error)
    {
        error = null;
        if (!NKeys.IsValidPublicAccountKey(accountKey))
        {
            error = "will only fetch valid account keys";
            _logger.LogWarning("Account fetch failed: {Error}", error);
            return null;
        }
        if (Resolver?.Fetch(accountKey) is not { } jwt)
        {
            error = AccountMissing;
            // Go logs every failed fetch; the directory resolvers' own texts (a lookup over the cluster that times out) are not modelled.
            if (Resolver is MemoryAccountResolver)
            {
                _logger.LogWarning("Account fetch failed: {Error}", error);
            }
            else if (Resolver is UrlAccountResolver { LastError: { } urlError })
            {
                _logger.LogWarning("Account fetch failed: {Error}", urlError);
            }
            return null;
        }
        try
        {
            var claims = Verify(jwt);
            if (claims.Subject != accountKey)
            {
                error = AccountValidationFailed;
                return null;
            }
            return claims;
        }
        catch (JwtException e)
        {
            error = e.Message;
            return null;
        }
    }

    /// <summary>A new account built from verified claims.</summary>
    public Account Build(AccountClaims claims)
    {
        var account = new Account(claims.Subject, AccountFromClaims.Options(claims));
        account.Mappings = Mappings.SubjectMapper.Create(account.Options.Mappings);
        account.Jwt = new AccountJwt(claims, IsStrict(claims));
        return account;
    }

    /// <summary>Go's strictSigningKeyUsage: an account issued by a strict operator's signing key cannot sign its own users.</summary>
    public bool IsStrict(AccountClaims claims) => _strictSigners.Contains(claims.Issuer);

    private static IAccountResolver? Create(ResolverOptions? options) => options?.Kind switch
    {
        ResolverKind.Memory => new MemoryAccountResolver(),
        ResolverKind.Full => new DirectoryAccountResolver(options.Directory, full: true, options.AllowDelete),
        ResolverKind.Cache => new DirectoryAccountResolver(options.Directory, full: false, allowDelete: false),
        ResolverKind.Url => new UrlAccountResolver(options.Url!),
        _ => null,
    };

    public static OperatorAccounts? For(ServerOptions options, ILogger? logger = null) => options.Operator.Enabled ? new OperatorAccounts(options.Operator, logger) : null;
}
