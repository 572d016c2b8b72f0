using System.Collections.Concurrent;
using System.Text;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
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

    private readonly ILogger _logger;

    // A routed server without JetStream of its own proxies its accounts' API requests to the cluster's (JetStreamApiImport).
    private readonly bool _importsJetStreamApi;

    public AccountRegistry(ServerOptions options, ILogger? logger = null)
    {
        _logger = logger ?? NullLogger.Instance;
        _importsJetStreamApi = JetStreamApiImport.Applies(options);
        ResolveDefinitionsGivenInCode(options);
        Global = Add(new Account(Account.GlobalAccountName));
        Operator = OperatorAccounts.For(options, _logger);
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

    private void WireImports()
    {
        foreach (var importer in _accounts.Values)
        {
            WireImports(importer);
            WireJetStreamApiImport(importer);
        }
    }

    private void WireJetStreamApiImport(Account importer)
    {
        if (_importsJetStreamApi && System is { } system && JetStreamApiImport.Wanted(importer, system, _accounts.Count))
        {
            JetStreamApiImport.Wire(importer, system);
        }
    }

    /// <summary>
    /// Places the internal subscriptions of the account's resolved imports: a stream import's route in
    /// the exporter's index, a service import's route in the importer's.
    /// </summary>
    private void WireImports(Account importer)
    {
        foreach (var import in importer.Options.StreamImports)
        {
            if (Find(import.Exporter) is not { } exporter)
            {
                continue;
            }
            var route = new StreamImportRoute(importer, import);
            var subscription = new Subscription(route, Encoding.UTF8.GetBytes(import.From), null, exporter.NextInternalSid());
            if (exporter.SubList.Insert(subscription))
            {
                exporter.HiddenSubscriptions++;
                importer.ImportSubscriptions.Add((exporter, subscription));
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
            var subscription = new Subscription(route, Encoding.UTF8.GetBytes(import.From), null, importer.NextInternalSid());
            if (importer.SubList.Insert(subscription))
            {
                importer.ImportSubscriptions.Add((importer, subscription));
            }
        }
    }

    /// <summary>Takes the account's import routes out of the indexes they were placed in.</summary>
    private static void UnwireImports(Account importer)
    {
        foreach (var (owner, subscription) in importer.ImportSubscriptions)
        {
            if (owner.SubList.Remove(subscription) && subscription.Receiver is StreamImportRoute)
            {
                owner.HiddenSubscriptions--;
            }
        }
        importer.ImportSubscriptions.Clear();
        importer.JetStreamApiImported = false;
    }

    /// <summary>
    /// Operator mode: resolves the account's exports and imports from its claims (Go's
    /// UpdateAccountClaims import/export half) and places the import routes. Exporters are looked up,
    /// and so fetched, first; the account is registered before this runs, so an exporter importing
    /// back finds it.
    /// </summary>
    private void ResolveOperatorImports(Account account)
    {
        UnwireImports(account);
        var options = account.Options;
        options.StreamExports.Clear();
        options.ServiceExports.Clear();
        options.StreamImports.Clear();
        options.ServiceImports.Clear();
        var errors = new List<string>();
        var resolver = new ImportExportResolver([options], name => Find(name)?.Options, ActivationValid, account.Name, errors);
        // Exports first: an exporter fetched below that imports back from this account needs them.
        resolver.ResolveExports();
        var exporters = options.StreamImportDefinitions.Select(i => i.Account).Concat(options.ServiceImportDefinitions.Select(i => i.Account));
        foreach (var exporter in exporters.Distinct(StringComparer.Ordinal).Where(e => e != account.Name))
        {
            if (Lookup(exporter, out var error) is null)
            {
                _logger.LogError("Can't locate account [{Exporter}] for import (err={Error})", exporter, error);
            }
        }
        resolver.ResolveImports();
        account.IncompleteImportsFrom = IncompleteExporters(options);
        foreach (var error in errors)
        {
            _logger.LogDebug("Error adding import to account [{Account}]: {Error}", account.Name, error);
        }
        WireImports(account);
        WireJetStreamApiImport(account);
    }

    private bool ActivationValid(string exporter, string importer, ExportGrant grant, string? token, string subject, bool isService) =>
        Find(exporter)?.Jwt is { } jwt && ActivationValidation.IsValid(token, importer, jwt, grant, subject, isService, JwtValidation.Now);

    /// <summary>
    /// Operator mode, after <paramref name="updated"/> took new claims (Go's updateAccountClaimsWithRefresh):
    /// its own exports and imports are resolved again; the imports other accounts hold from it are
    /// checked again and turn invalid (or valid) in place; accounts whose imports from it could not be
    /// added before are resolved again.
    /// </summary>
    public void RefreshImports(Account updated)
    {
        ResolveOperatorImports(updated);
        var others = _accounts.Values.Where(a => a != updated && a.Jwt is not null).ToList();
        foreach (var account in others)
        {
            foreach (var (_, subscription) in account.ImportSubscriptions)
            {
                Recheck(account, updated, subscription.Receiver);
            }
        }
        foreach (var account in others.Where(a => a.IncompleteImportsFrom.Contains(updated.Name)))
        {
            ResolveOperatorImports(account);
        }
    }

    /// <summary>Checks an import route of <paramref name="importer"/> from <paramref name="exporter"/> again: it turns invalid (or valid) in place.</summary>
    private void Recheck(Account importer, Account exporter, object? receiver)
    {
        switch (receiver)
        {
            case StreamImportRoute stream when stream.Import.Exporter == exporter.Name:
                stream.Invalid = !ImportExportResolver.ExportApproves(exporter.Options.StreamExports.Select(e => e.Grant), importer.Name, stream.Import.From,
                    grant => ActivationValid(exporter.Name, importer.Name, grant, stream.Import.Token, stream.Import.From, isService: false));
                break;
            case ServiceImportRoute service when service.Import.Exporter == exporter.Name:
                service.Invalid = !ImportExportResolver.ExportApproves(exporter.Options.ServiceExports.Select(e => e.Grant), importer.Name, service.Import.To,
                    grant => ActivationValid(exporter.Name, importer.Name, grant, service.Import.Token, service.Import.To, isService: true));
                break;
        }
    }

    /// <summary>
    /// Go's activationExpired: an import whose activation token's exp passed is checked again (a newer
    /// token from an update would keep it valid) and otherwise turns invalid.
    /// </summary>
    public void RecheckImports(Account importer, string exporterName)
    {
        if (Find(exporterName) is not { } exporter)
        {
            return;
        }
        foreach (var (_, subscription) in importer.ImportSubscriptions)
        {
            Recheck(importer, exporter, subscription.Receiver);
        }
    }

    /// <summary>Go's incomplete imports: the exporters some import definition of the account could not be resolved against.</summary>
    private static HashSet<string> IncompleteExporters(AccountOptions options)
    {
        var missing = new HashSet<string>(StringComparer.Ordinal);
        foreach (var definition in options.StreamImportDefinitions)
        {
            if (!options.StreamImports.Any(i => i.Exporter == definition.Account && i.From == definition.Subject))
            {
                missing.Add(definition.Account);
            }
        }
        foreach (var definition in options.ServiceImportDefinitions)
        {
            if (!options.ServiceImports.Any(i => i.Exporter == definition.Account && i.From == definition.To))
            {
                missing.Add(definition.Account);
            }
        }
        return missing;
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

    /// <summary>Operator mode's MEMORY resolver reload: an account whose JWT is gone leaves the registry (its clients stay until checked again).</summary>
    public void Forget(Account account) => _accounts.TryRemove(new KeyValuePair<string, Account>(account.Name, account));

    /// <summary>Go's ErrAccountExpired text.</summary>
    public const string AccountExpired = "account expired";

    /// <summary>Every account, unordered (no sort: the heartbeat walks it).</summary>
    public ICollection<Account> Unordered => _accounts.Values;

    /// <summary>Operator mode: an account fetched from the resolver joined the registry.</summary>
    public event Action<Account>? Registered;

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
            // Go fetches an expired account again; only a claims update revives it here (see AccountExpiry).
            if (known.Expired)
            {
                error = AccountExpired;
                return null;
            }
            return known;
        }
        if (Operator?.Fetch(name, out error) is not { } claims)
        {
            error ??= OperatorAccounts.AccountMissing;
            return null;
        }
        // Two first users of an account can race here: the first registration wins and resolves the imports.
        var built = Operator.Build(claims);
        var account = _accounts.GetOrAdd(name, built);
        if (ReferenceEquals(account, built))
        {
            ResolveOperatorImports(account);
            Registered?.Invoke(account);
        }
        return account;
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
