using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Hosting;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Applies new claims to a loaded account (Go's updateAccountWithClaimJWT and updateAccountClaimsWithRefresh):
/// for the full resolver's claim updates and for a MEMORY resolver's preloads on a reload. Connections the
/// new claims revoke or no longer fit are closed.
/// </summary>
internal sealed class AccountClaimsApplier
{
    private readonly NatsServer _server;
    private readonly AccountRegistry _accounts;
    private readonly OperatorAccounts _operator;
    private readonly ILogger _logger;

    public AccountClaimsApplier(NatsServer server, AccountRegistry accounts, ILogger logger)
    {
        _server = server;
        _accounts = accounts;
        _operator = accounts.Operator!;
        _logger = logger;
    }

    /// <summary>Go's updateAccountWithClaimJWT: only claims that still verify reach a loaded account; false when they do not.</summary>
    public bool Changed(Account account, string jwt)
    {
        if (account.Jwt?.Token == jwt)
        {
            return true;
        }
        AccountClaims claims;
        try
        {
            claims = _operator.Verify(jwt);
        }
        catch (JwtException e)
        {
            _logger.LogError("update resulted in error {Error}", e.Message);
            return false;
        }
        if (claims.Subject != account.Name)
        {
            _logger.LogError("update resulted in error {Error}", OperatorAccounts.AccountValidationFailed);
            return false;
        }
        Apply(account, claims);
        return true;
    }

    /// <summary>Go's updateAccountClaimsWithRefresh for what this server models: limits, permissions, mappings, signers, revocations.</summary>
    private void Apply(Account account, AccountClaims claims)
    {
        var old = account.Jwt;
        var updated = new AccountJwt(claims, _operator.IsStrict(claims));
        account.Options = AccountFromClaims.Options(claims);
        account.Mappings = Mappings.SubjectMapper.Create(account.Options.Mappings);
        account.Jwt = updated;
        // Go's checkExpiration: only claims still in time get here, so the account is live again.
        account.Expired = false;
        _accounts.RefreshImports(account);
        _server.JetStream?.UpdateAccount(account);

        var clients = _server.Clients.Where(c => ReferenceEquals(c.Account, account) && c.ConnectReceived && !c.IsClosed).ToList();
        var maxConnections = account.Options.Limits.MaxConnections;
        if (maxConnections != AccountLimits.NoLimit && clients.Count > maxConnections)
        {
            // Newest first: the oldest connections are the ones kept.
            clients = [.. clients.OrderByDescending(c => c.StartTime)];
        }
        var survivors = new List<Clients.ClientConnection>(clients.Count);
        for (var i = 0; i < clients.Count; i++)
        {
            if (maxConnections != AccountLimits.NoLimit && i >= maxConnections)
            {
                clients[i].Reload.CloseForMaxAccountConnections();
                continue;
            }
            if (clients[i].Reload.ApplyAccountClaims(updated))
            {
                survivors.Add(clients[i]);
            }
        }
        var altered = AlteredScopes(old, claims);
        if (altered is not null)
        {
            foreach (var client in survivors)
            {
                client.Reload.CloseIfSignerGone(updated, altered);
            }
        }
    }

    /// <summary>Null when the signing keys did not change; else the keys whose scope changed.</summary>
    private static HashSet<string>? AlteredScopes(AccountJwt? old, AccountClaims claims)
    {
        var before = old?.Claims.Nats.SigningKeys ?? [];
        var after = claims.Nats.SigningKeys;
        var altered = new HashSet<string>(StringComparer.Ordinal);
        var changed = before.Count != after.Count;
        foreach (var (key, scope) in after)
        {
            if (!before.TryGetValue(key, out var previous))
            {
                changed = true;
            }
            else if (!SameScope(previous, scope))
            {
                changed = true;
                altered.Add(key);
            }
        }
        return changed ? altered : null;
    }

    private static bool SameScope(UserScope? a, UserScope? b) =>
        (a is null && b is null)
        || (a is not null && b is not null && System.Text.Json.JsonSerializer.Serialize(a, JwtJsonContext.Default.UserScope) == System.Text.Json.JsonSerializer.Serialize(b, JwtJsonContext.Default.UserScope));
}
