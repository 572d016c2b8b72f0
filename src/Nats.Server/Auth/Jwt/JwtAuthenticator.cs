using System.Net;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Operator mode's CONNECT check, in the order of Go's processClientOrLeafAuthentication for a user
/// JWT: decode and validate the JWT, connection type, pinned accounts, the account (resolved on first
/// use) and its trust, the signer (account key or signing key, scoped keys imposing their template),
/// account expiry, bearer tokens or the nonce signature, revocation, source network and connect times.
/// Refusals are logged at debug level as Go does, except the two Go logs as errors.
/// </summary>
internal sealed class JwtAuthenticator : IClientAuthenticator
{
    private readonly AccountRegistry _accounts;
    private readonly OperatorAccounts _operator;
    private readonly HashSet<string>? _pinned;
    private readonly ILogger _logger;

    public JwtAuthenticator(AccountRegistry accounts, OperatorOptions options, ILogger logger)
    {
        _accounts = accounts;
        _operator = accounts.Operator!;
        _pinned = options.PinnedAccounts;
        _logger = logger;
    }

    public bool AuthRequired => true;

    public bool AdvertiseAuthRequired => true;

    public bool NonceRequired => true;

    public AuthenticatedUser? Authenticate(in ClientAuthRequest request)
    {
        var connect = request.Connect;
        var client = request.Client;
        if (string.IsNullOrEmpty(connect.Jwt))
        {
            return Refuse(client, "Authentication requires a user JWT");
        }
        UserClaims user;
        try
        {
            user = JwtDecoder.DecodeUser(connect.Jwt);
        }
        catch (JwtException e)
        {
            return Refuse(client, $"User JWT not valid: {e.Message}");
        }
        var now = JwtValidation.Now;
        var validation = new JwtValidation();
        user.Validate(validation, now);
        if (validation.IsBlocking(true))
        {
            return Refuse(client, "User JWT no longer valid");
        }
        if (user.Nats.AllowedConnectionTypes is { Count: > 0 } types)
        {
            var known = types.Select(t => t.ToUpperInvariant()).Where(ConnectionTypes.IsKnown).ToList();
            if (known.Count == 0)
            {
                return Refuse(client, "invalid connection types");
            }
            if (!ConnectionTypes.Allows(known, request.ConnectionType))
            {
                return Refuse(client, "Connection type not allowed");
            }
        }
        var issuer = user.AccountKey;
        if (_pinned is not null && !_pinned.Contains(issuer))
        {
            return Refuse(client, $"Account {issuer} not listed as operator pinned account");
        }
        if (_accounts.Lookup(issuer, out var error) is not { } account)
        {
            return Refuse(client, $"Account JWT lookup error: {error}");
        }
        if (account.Jwt is not { } accountJwt || !_operator.IsTrustedIssuer(accountJwt.Claims.Issuer))
        {
            return Refuse(client, "Account JWT not signed by trusted operator");
        }
        if (!accountJwt.HasIssuer(user.Issuer, out var scope))
        {
            return Refuse(client, "User JWT issuer is not known");
        }
        var pub = user.Nats.Pub;
        var sub = user.Nats.Sub;
        var limits = (JwtUserPermissionLimits)user.Nats;
        if (scope is not null)
        {
            if (!user.Nats.HasEmptyPermissions)
            {
                return Refuse(client, "User JWT is not valid: scoped users require no permissions or limits set");
            }
            if (PermissionTemplates.Apply(scope.Template, user, accountJwt.Claims) is not { } templated)
            {
                return Refuse(client, "User JWT generated invalid permissions");
            }
            (pub, sub) = templated;
            limits = scope.Template;
        }
        if (account.Expired || accountJwt.IsExpired(now))
        {
            return Refuse(client, "Account JWT has expired");
        }
        if (limits.BearerToken && accountJwt.DisallowBearer)
        {
            return Refuse(client, "Account does not allow bearer token");
        }
        if (!limits.BearerToken)
        {
            if (string.IsNullOrEmpty(connect.Sig))
            {
                return Refuse(client, "Signature missing");
            }
            if (!OptionsAuthenticator.VerifyNonceSignature(user.Subject, connect.Sig, request.Nonce))
            {
                return Refuse(client, "Signature not verified");
            }
        }
        if (accountJwt.IsUserRevoked(user.Subject, user.IssuedAt))
        {
            return Refuse(client, "User authentication revoked");
        }
        if (!SourceAllowed(limits.Src, request.RemoteIp))
        {
            _logger.LogError("{Client} - Bad src Ip {Ip}", client, request.RemoteIp);
            return null;
        }
        if (!ConnectTimes.Allowed(limits, DateTimeOffset.UtcNow, out var windowLeft))
        {
            _logger.LogError("{Client} - Outside connect times", client);
            return null;
        }
        var permissions = AccountFromClaims.Permissions(pub, sub, limits.Resp) ?? account.Options.DefaultPermissions;
        return new AuthenticatedUser(AuthMethod.Jwt, user.Subject, account.Name,
            permissions is null ? null : new CompiledPermissions(CompiledPermissions.Normalize(permissions)))
        {
            MaxPayload = unchecked((int)limits.Payload),
            MaxSubscriptions = unchecked((int)limits.Subs),
            ValidFor = ValidFor(user.Expires, now, windowLeft),
            JwtClaims = user,
        };
    }

    /// <summary>Go's setExpiration: the earlier of the JWT's expiry and the end of the connect window.</summary>
    private static TimeSpan? ValidFor(long expires, long now, TimeSpan? windowLeft)
    {
        if (expires == 0)
        {
            return windowLeft;
        }
        var untilExpiry = TimeSpan.FromSeconds(Math.Max(0, expires - now));
        return windowLeft is { } w && w < untilExpiry ? w : untilExpiry;
    }

    /// <summary>Go's validateSrc: with networks listed, the client's address must be in one of them.</summary>
    private static bool SourceAllowed(List<string>? networks, string host)
    {
        if (networks is not { Count: > 0 })
        {
            return true;
        }
        if (!IPAddress.TryParse(host, out var ip))
        {
            return false;
        }
        if (ip.IsIPv4MappedToIPv6)
        {
            ip = ip.MapToIPv4();
        }
        foreach (var cidr in networks)
        {
            if (!IPNetwork.TryParse(cidr, out var network))
            {
                return false;
            }
            if (network.Contains(ip))
            {
                return true;
            }
        }
        return false;
    }

    private AuthenticatedUser? Refuse(object? client, string reason)
    {
        _logger.LogDebug("{Client} - {Reason}", client, reason);
        return null;
    }
}
