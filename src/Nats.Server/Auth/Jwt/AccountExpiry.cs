using Nats.Server.Accounts;
using Nats.Server.Hosting;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's account expiration timer and activation expiry timers, run on the server heartbeat instead of
/// a timer each: an account whose JWT exp passed is marked expired and its clients are closed with
/// "Account Authentication Expired"; an import whose activation token's exp passed is checked again
/// and turns invalid (Go's activationExpired). The full resolver's delete expires accounts the same way.
/// </summary>
internal sealed class AccountExpiry
{
    private readonly NatsServer _server;
    private readonly AccountRegistry _accounts;

    // Activation exp by token, decoded once: tokens never change, a new one is a new string.
    private readonly Dictionary<string, long> _activationExpiry = new(StringComparer.Ordinal);
    private int _running;

    public AccountExpiry(NatsServer server, AccountRegistry accounts)
    {
        _server = server;
        _accounts = accounts;
    }

    /// <summary>One sweep; a sweep still running when the next heartbeat fires makes that one skip.</summary>
    public void Check()
    {
        if (Interlocked.Exchange(ref _running, 1) == 1)
        {
            return;
        }
        try
        {
            var now = JwtValidation.Now;
            foreach (var account in _accounts.Unordered)
            {
                if (account.Jwt is not { } jwt || account.Expired)
                {
                    continue;
                }
                if (jwt.IsExpired(now))
                {
                    Expire(account);
                    continue;
                }
                if (account.ImportSubscriptions.Count > 0)
                {
                    CheckActivations(account, now);
                }
            }
        }
        finally
        {
            Volatile.Write(ref _running, 0);
        }
    }

    /// <summary>Go's expiredTimeout: marks the account and closes its clients.</summary>
    public void Expire(Account account)
    {
        account.Expired = true;
        foreach (var client in _server.Clients)
        {
            if (ReferenceEquals(client.Account, account) && client.ConnectReceived && !client.IsClosed)
            {
                client.Reload.CloseForAccountExpired();
            }
        }
    }

    private void CheckActivations(Account account, long now)
    {
        // Lookups on other threads may re-wire the list; a snapshot is enough for a once-a-tick check.
        foreach (var (_, subscription) in account.ImportSubscriptions.ToArray())
        {
            var (exporter, token) = subscription.Receiver switch
            {
                StreamImportRoute { Invalid: false } s => (s.Import.Exporter, s.Import.Token),
                ServiceImportRoute { Invalid: false } s => (s.Import.Exporter, s.Import.Token),
                _ => (null, null),
            };
            if (exporter is null || token is null)
            {
                continue;
            }
            var expires = ActivationExpires(token);
            if (expires != 0 && expires <= now)
            {
                _accounts.RecheckImports(account, exporter);
            }
        }
    }

    private long ActivationExpires(string token)
    {
        if (!_activationExpiry.TryGetValue(token, out var expires))
        {
            try
            {
                expires = JwtDecoder.Decode(token).Expires;
            }
            catch (JwtException)
            {
                // An undecodable token never validated, so the import is invalid already.
                expires = 0;
            }
            _activationExpiry[token] = expires;
        }
        return expires;
    }
}
