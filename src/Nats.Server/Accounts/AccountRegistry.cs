using System.Collections.Concurrent;
using System.Text;
using Nats.Server.Auth.Jwt;
using Nats.Server.Configuration;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Accounts;

/// <summary>
/// Every account of the server, by name: the global account <c>$G</c>, the configured ones and the
/// system account (<c>$SYS</c> unless the configuration names another or turns it off), as the Go
/// server's configureAccounts and SetDefaultSystemAccount set them up.
/// </summary>
internal sealed class AccountRegistry
{
    public const string DefaultSystemAccountName = "$SYS";

    private readonly ConcurrentDictionary<string, Account> _accounts = new(StringComparer.Ordinal);

    public AccountRegistry(ServerOptions options)
    {
        ResolveDefinitionsGivenInCode(options);
        Global = Add(new Account(Account.GlobalAccountName));
        Operator = OperatorAccounts.For(options);
        if (Operator is not null)
        {
            System = OperatorSystemAccount(options);
            if (System is not null)
            {
                System.IsSystem = true;
            }
            return;
        }
        foreach (var configured in options.Accounts)
        {
            Add(new Account(configured.Name, configured)).Mappings = Mappings.SubjectMapper.Create(configured.Mappings);
        }

        var systemName = options.SystemAccount;
        if (string.IsNullOrEmpty(systemName) && _accounts.ContainsKey(DefaultSystemAccountName))
        {
            // An account literally called $SYS is the system account, as in Go.
            systemName = DefaultSystemAccountName;
        }
        if (!string.IsNullOrEmpty(systemName))
        {
            if (!_accounts.TryGetValue(systemName, out var system))
            {
                throw new InvalidOperationException($"error resolving system account: account missing");
            }
            System = system;
            if (_accounts.Count == 2 && string.IsNullOrEmpty(options.NoAuthUser))
            {
                GeneratedNoAuthUser = AddGlobalNoAuthUser(options);
            }
        }
        else if (!options.NoSystemAccount)
        {
            System = Add(new Account(DefaultSystemAccountName));
        }
        if (System is not null)
        {
            System.IsSystem = true;
        }
        WireImports();
    }

    /// <summary>
    /// Options built in code may carry export/import definitions that no config binder resolved:
    /// resolve them here with the same checks, refusing to start on the first error.
    /// </summary>
    private static void ResolveDefinitionsGivenInCode(ServerOptions options)
    {
        var defined = options.Accounts.Any(a => a.ExportDefinitions.Count + a.StreamImportDefinitions.Count + a.ServiceImportDefinitions.Count > 0);
        var resolved = options.Accounts.Any(a => a.StreamExports.Count + a.ServiceExports.Count + a.StreamImports.Count + a.ServiceImports.Count > 0);
        if (!defined || resolved)
        {
            return;
        }
        var errors = new List<string>();
        ImportExportBinder.Resolve(options, "accounts", errors);
        if (errors.Count > 0)
        {
            throw new InvalidOperationException(errors[0]);
        }
    }

    /// <summary>
    /// Places the internal subscriptions of every resolved import: a stream import's route in the
    /// exporter's index, a service import's route in the importer's.
    /// </summary>
    private void WireImports()
    {
        foreach (var importer in _accounts.Values)
        {
            foreach (var import in importer.Options.StreamImports)
            {
                if (Find(import.Exporter) is not { } exporter)
                {
                    continue;
                }
                var route = new StreamImportRoute(importer, import);
                if (exporter.SubList.Insert(new Subscription(route, Encoding.UTF8.GetBytes(import.From), null, exporter.NextInternalSid())))
                {
                    exporter.HiddenSubscriptions++;
                }
            }
            foreach (var import in importer.Options.ServiceImports)
            {
                if (Find(import.Exporter) is not { } exporter)
                {
                    continue;
                }
                var export = exporter.Options.ServiceExports
                    .Where(e => e.Subject == import.To || SubjectRules.IsSubsetMatch(import.To, e.Subject))
                    .OrderBy(e => e.Subject == import.To ? 0 : 1)
                    .FirstOrDefault();
                var route = new ServiceImportRoute(importer, exporter, import, export);
                importer.SubList.Insert(new Subscription(route, Encoding.UTF8.GetBytes(import.From), null, importer.NextInternalSid()));
            }
        }
    }

    public Account Global { get; }

    /// <summary>
    /// The no_auth_user made up for a system-account-only configuration. Go adds it after INFO's
    /// auth_required is settled, so unlike a configured no_auth_user it leaves auth_required on.
    /// </summary>
    public string? GeneratedNoAuthUser { get; }

    /// <summary>Null when no_system_account is set.</summary>
    public Account? System { get; }

    /// <summary>Accounts sorted by name, as /accountz lists them.</summary>
    public IEnumerable<Account> All => _accounts.Values.OrderBy(a => a.Name, StringComparer.Ordinal);

    public int Count => _accounts.Count;

    public Account? Find(string name) => _accounts.GetValueOrDefault(name);

    /// <summary>Operator mode's resolver and trust anchors; null otherwise.</summary>
    public OperatorAccounts? Operator { get; }

    /// <summary>
    /// Go's lookupAccount: a known account, else (operator mode) one fetched from the resolver and
    /// registered; null with the reason when neither works.
    /// </summary>
    public Account? Lookup(string name, out string? error)
    {
        error = null;
        if (Find(name) is { } known)
        {
            return known;
        }
        if (Operator?.Fetch(name, out error) is not { } claims)
        {
            error ??= OperatorAccounts.AccountMissing;
            return null;
        }
        // Two first users of an account can race here: the first registration wins.
        return _accounts.GetOrAdd(name, _ => Operator.Build(claims));
    }

    /// <summary>
    /// Go's system account setup in operator mode: the named account from the resolver; with a
    /// directory resolver a placeholder when the JWT is not there yet; $SYS when none is named.
    /// </summary>
    private Account? OperatorSystemAccount(ServerOptions options)
    {
        var name = options.SystemAccount;
        if (string.IsNullOrEmpty(name))
        {
            return options.NoSystemAccount ? null : Add(new Account(DefaultSystemAccountName));
        }
        if (Lookup(name, out var error) is { } found)
        {
            return found;
        }
        if (options.Operator.Resolver is { IsDirectory: true } && options.Operator.TrustedOperators.Count == 1)
        {
            // Go's bootstrapping system account: its own key may sign users until the JWT arrives.
            var placeholder = Add(new Account(name));
            placeholder.Jwt = new AccountJwt(new AccountClaims { Subject = name, Issuer = options.Operator.TrustedOperators[0].Subject }, strict: false);
            return placeholder;
        }
        throw new InvalidOperationException($"error resolving system account: {error}");
    }

    /// <summary>Stops the response-expiry timers of every account (server shutdown).</summary>
    public void StopTimers()
    {
        foreach (var account in _accounts.Values)
        {
            account.ResponsesIfCreated?.Clear();
        }
    }

    /// <summary>
    /// Go's configureAccounts quirk: when the only accounts are $G and a configured system account (the
    /// usual way to give the system account a user), clients without credentials still land in $G
    /// through a generated no_auth_user.
    /// </summary>
    /// <summary>A reloaded configuration gets the same generated user, so its clients are not dropped.</summary>
    public void ReapplyGeneratedNoAuthUser(ServerOptions reloaded)
    {
        if (GeneratedNoAuthUser is { } name && string.IsNullOrEmpty(reloaded.NoAuthUser))
        {
            AddGlobalNoAuthUser(reloaded, name);
        }
    }

    private static string AddGlobalNoAuthUser(ServerOptions options, string? reuse = null)
    {
        const string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> suffix = stackalloc char[8];
        for (var i = 0; i < suffix.Length; i++)
        {
            suffix[i] = digits[Random.Shared.Next(digits.Length)];
        }
        var name = reuse ?? "nats-" + new string(suffix);
        (options.Users ??= []).Add(new Auth.User { Username = name, Password = name[6..], Account = Account.GlobalAccountName });
        options.NoAuthUser = name;
        return name;
    }

    private Account Add(Account account)
    {
        _accounts[account.Name] = account;
        return account;
    }
}
