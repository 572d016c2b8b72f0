using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Accounts.Resolvers;
using Nats.Server.Hosting;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// The full resolver's claim services (Go's DirAccResolver.Start handlers): an update is checked,
/// stored when newer, and applied to the account if it is loaded (Go's updateAccountWithClaimJWT and
/// updateAccountClaimsWithRefresh), closing the connections it revokes or no longer fits.
/// </summary>
internal sealed class AccountClaimsUpdates
{
    private readonly NatsServer _server;
    private readonly AccountRegistry _accounts;
    private readonly OperatorAccounts _operator;
    private readonly IAccountResolver _resolver;
    private readonly string _operatorKey;
    private readonly bool _strict;
    private readonly HashSet<string> _operatorKeys;
    private readonly ILogger _logger;
    private readonly AccountClaimsApplier _applier;

    private AccountClaimsUpdates(NatsServer server, AccountRegistry accounts, OperatorOptions options, ILogger logger)
    {
        _server = server;
        _accounts = accounts;
        _operator = accounts.Operator!;
        _resolver = _operator.Resolver!;
        _operatorKey = options.TrustedOperators[0].Subject;
        _strict = options.TrustedOperators[0].Nats.StrictSigningKeyUsage;
        // Go's getOperatorKeys: who may sign a delete request.
        _operatorKeys = new HashSet<string>(options.TrustedOperators[0].Nats.SigningKeys ?? [], StringComparer.Ordinal);
        if (!_strict)
        {
            _operatorKeys.Add(_operatorKey);
        }
        _logger = logger;
        _applier = new AccountClaimsApplier(server, accounts, logger);
    }

    /// <summary>Only the full resolver answers claim requests.</summary>
    public static AccountClaimsUpdates? For(NatsServer server, AccountRegistry accounts, OperatorOptions options, ILogger logger) =>
        accounts.Operator?.Resolver is { TracksUpdates: true } && options.TrustedOperators.Count > 0
            ? new AccountClaimsUpdates(server, accounts, options, logger)
            : null;

    /// <summary>One update: the account it names (or "n/a"), Go's message and the error if any.</summary>
    public readonly record struct Outcome(string? Account, string Message, string? Error);

    /// <param name="subjectKey">The account named by the request subject; null for $SYS.REQ.CLAIMS.UPDATE.</param>
    /// <param name="jwt">The request body.</param>
    public Outcome Update(string? subjectKey, string jwt)
    {
        AccountClaims claims;
        try
        {
            claims = JwtDecoder.DecodeAccount(jwt);
        }
        catch (JwtException e)
        {
            return Respond(new Outcome("n/a", "jwt update resulted in error", e.Message));
        }
        var key = subjectKey ?? claims.Subject;
        var validation = new JwtValidation();
        claims.Validate(validation, JwtValidation.Now);
        // The two subjects differ in which check comes first, as in Go.
        if (subjectKey is null && claims.Issuer == _operatorKey && _strict)
        {
            return Respond(new Outcome(key, "jwt update resulted in error", "operator requires issuer to be a signing key"));
        }
        if (validation.IsBlocking(false))
        {
            return Respond(new Outcome(claims.Subject, "jwt validation failed", $"validation errors: [{string.Join(' ', validation.Errors)}]"));
        }
        if (subjectKey is not null && claims.Subject != subjectKey)
        {
            return Respond(new Outcome(key, "jwt update resulted in error", "subject does not match jwt content"));
        }
        if (subjectKey is not null && claims.Issuer == _operatorKey && _strict)
        {
            return Respond(new Outcome(key, "jwt update resulted in error", "operator requires issuer to be a signing key"));
        }
        if (SaveIfNewer(key, claims) is { } saveError)
        {
            return Respond(new Outcome(key, "jwt update resulted in error", saveError));
        }
        return Respond(new Outcome(key, "jwt updated", null));
    }

    /// <summary>
    /// Go's handleDeleteRequest ($SYS.REQ.CLAIMS.DELETE): a generic JWT self-signed by the operator (or
    /// one of its signing keys) whose "nats" object lists "accounts"; each is removed from the store
    /// (renamed to .deleted, as Go's allow_delete does) and, if loaded, expired with its clients closed.
    /// </summary>
    public Outcome Delete(string jwt)
    {
        var subject = "";
        string? error = null;
        var accounts = new List<string>();
        try
        {
            var claims = JwtDecoder.DecodeGeneric(jwt);
            subject = claims.Subject;
            error = DeleteRequestError(claims, accounts);
        }
        catch (JwtException e)
        {
            error = e.Message;
        }
        if (error is not null)
        {
            return Respond(new Outcome(null, $"delete accounts request by {subject} failed", error));
        }
        var errors = new List<string>();
        foreach (var key in accounts)
        {
            try
            {
                // A key with no stored JWT counts as deleted, as in Go.
                _resolver.Delete(key);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                errors.Add(e.Message);
                continue;
            }
            if (_accounts.Find(key) is { } account)
            {
                _logger.LogDebug("Disable account {Account} due to remove", key);
                // Go's removeCb: new clients are locked out by zero limits, the account expires (closing
                // its clients) and its JetStream stops, keeping the data for a later update to bring back.
                account.Options.Limits = new AccountLimits(0, 0, 0, 0);
                _server.AccountExpiry?.Expire(account);
                _server.JetStream?.DisableAccount(account);
            }
        }
        var passed = accounts.Count - errors.Count;
        return errors.Count == 0
            ? Respond(new Outcome(null, $"deleted {passed} accounts", null))
            : Respond(new Outcome(null, $"deleted {passed} accounts, failed for {errors.Count}", string.Join('\n', errors)));
    }

    /// <summary>Go's checks in their order; fills <paramref name="accounts"/> from the request.</summary>
    private string? DeleteRequestError(GenericClaims claims, List<string> accounts)
    {
        if (!_resolver.AllowDelete)
        {
            return "delete must be enabled in server config";
        }
        if (claims.Subject != claims.Issuer)
        {
            return "not self signed";
        }
        if (!_operatorKeys.Contains(claims.Issuer))
        {
            return "not trusted";
        }
        if (claims.Nats is not { } nats || !nats.TryGetProperty("accounts", out var list) || list.ValueKind != System.Text.Json.JsonValueKind.Array)
        {
            return "malformed request";
        }
        var system = _accounts.System?.Name;
        foreach (var entry in list.EnumerateArray())
        {
            if (entry.ValueKind != System.Text.Json.JsonValueKind.String || entry.GetString() is not { Length: > 0 } key || !NKeys.IsValidPublicAccountKey(key))
            {
                return "malformed request";
            }
            if (key == system)
            {
                return "not allowed to delete system account";
            }
            accounts.Add(key);
        }
        return null;
    }

    /// <summary>The stored JWT for CLAIMS.LOOKUP; null (no answer) when there is none.</summary>
    public string? Lookup(string accountKey) => _resolver.Fetch(accountKey);

    public IReadOnlyList<string> List() => _resolver.List();

    /// <summary>Go's DirJWTStore.saveIfNewer, then its "changed" callback.</summary>
    private string? SaveIfNewer(string key, AccountClaims claims)
    {
        if (_resolver.Fetch(key) is { } existingJwt)
        {
            JwtClaims? existing = null;
            try
            {
                existing = JwtDecoder.Decode(existingJwt);
            }
            catch (JwtException)
            {
                // Go overwrites what it cannot decode.
            }
            if (existing is not null)
            {
                if (existing.Id == claims.Id || existing.IssuedAt > claims.IssuedAt)
                {
                    return null;
                }
                if (claims.Subject != key)
                {
                    return "jwt subject nkey and provided nkey do not match";
                }
                if (existing.Subject != claims.Subject)
                {
                    return "subject of existing and new jwt do not match";
                }
            }
            if (existingJwt == claims.Token)
            {
                return null;
            }
        }
        try
        {
            _resolver.Store(key, claims.Token);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return e.Message;
        }
        if (_accounts.Find(key) is { } account)
        {
            _applier.Changed(account, claims.Token);
        }
        return null;
    }

    /// <summary>Go's respondToUpdate logging.</summary>
    private Outcome Respond(Outcome outcome)
    {
        if (outcome.Error is null)
        {
            if (outcome.Account is null)
            {
                _logger.LogDebug("{Message}", outcome.Message);
            }
            else
            {
                _logger.LogDebug("{Message} - {Account}", outcome.Message, outcome.Account);
            }
        }
        else if (outcome.Account is null)
        {
            _logger.LogError("{Message} - {Error}", outcome.Message, outcome.Error);
        }
        else
        {
            _logger.LogError("{Message} - {Account} - {Error}", outcome.Message, outcome.Account, outcome.Error);
        }
        return outcome;
    }
}
