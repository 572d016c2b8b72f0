using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Subjects;

namespace Nats.Server.Accounts;

/// <summary>
/// Decides whether an import's activation token satisfies an export that requires one (operator mode;
/// without it such exports admit nobody).
/// </summary>
/// <param name="exporter">The exporting account's name.</param>
/// <param name="importer">The importing account's name.</param>
/// <param name="grant">The export the import matched.</param>
/// <param name="token">The import's activation token, if any.</param>
/// <param name="subject">The exporter-side subject of the import.</param>
/// <param name="isService">Service (else stream) import.</param>
internal delegate bool ActivationCheck(string exporter, string importer, ExportGrant grant, string? token, string subject, bool isService);

/// <summary>
/// The second half of Go's parseAccounts: stream exports, service exports, stream imports, service
/// imports, in that order, each checked against what the earlier steps accepted (an import needs a
/// matching export that approves the importer, and must not close a cycle). Errors carry the accounts
/// block's position, as in Go. Operator mode runs the same steps for one account at a time, with the
/// other accounts found through the registry and activation tokens checked by the JWT layer.
/// </summary>
internal sealed class ImportExportResolver
{
    private readonly IReadOnlyList<AccountOptions> _accounts;
    private readonly Func<string, AccountOptions?> _find;
    private readonly bool _noSystemAccount;
    private readonly string _source;
    private readonly List<string> _errors;
    private readonly ActivationCheck? _activation;

    public ImportExportResolver(ServerOptions options, string source, List<string> errors)
    {
        var byName = options.Accounts.ToDictionary(a => a.Name, StringComparer.Ordinal);
        _accounts = options.Accounts;
        _find = byName.GetValueOrDefault;
        _noSystemAccount = options.NoSystemAccount;
        _source = source;
        _errors = errors;
    }

    /// <param name="accounts">The accounts whose exports and imports are (re)resolved.</param>
    /// <param name="find">Any account by name.</param>
    /// <param name="activation">Checks activation tokens for exports that require one.</param>
    /// <param name="source">Prefix of the error texts.</param>
    /// <param name="errors">Receives what was refused.</param>
    public ImportExportResolver(IReadOnlyList<AccountOptions> accounts, Func<string, AccountOptions?> find, ActivationCheck activation, string source, List<string> errors)
    {
        _accounts = accounts;
        _find = find;
        _activation = activation;
        _source = source;
        _errors = errors;
    }

    public void Run()
    {
        ResolveExports();
        ResolveImports();
    }

    public void ResolveExports()
    {
        foreach (var account in _accounts)
        {
            foreach (var export in account.ExportDefinitions.Where(e => !e.IsService))
            {
                if (ApprovedList(export, "stream", out var approved) && CheckTokenPosition(export, "stream"))
                {
                    account.StreamExports.RemoveAll(e => e.Subject == export.Subject);
                    account.StreamExports.Add(new ResolvedStreamExport(export.Subject, approved, export.AccountTokenPosition)
                    {
                        TokenRequired = export.TokenRequired,
                        Revocations = export.Revocations,
                    });
                }
            }
        }
        foreach (var account in _accounts)
        {
            foreach (var export in account.ExportDefinitions.Where(e => e.IsService))
            {
                if (!ApprovedList(export, "service", out var approved) || !CheckTokenPosition(export, "service"))
                {
                    continue;
                }
                if (export.Latency is not null && _noSystemAccount)
                {
                    _errors.Add($"{_source}: Error adding service latency sampling for \"{export.Subject}\": system account not setup");
                }
                account.ServiceExports.RemoveAll(e => e.Subject == export.Subject);
                account.ServiceExports.Add(new ResolvedServiceExport(export.Subject, approved, export.AccountTokenPosition, export.ResponseType,
                    export.ResponseThreshold ?? ResolvedServiceExport.DefaultResponseThreshold, export.Latency)
                {
                    TokenRequired = export.TokenRequired,
                    Revocations = export.Revocations,
                });
            }
        }
    }

    public void ResolveImports()
    {
        foreach (var account in _accounts)
        {
            foreach (var import in account.StreamImportDefinitions)
            {
                AddStreamImport(account, import);
            }
        }
        foreach (var account in _accounts)
        {
            foreach (var import in account.ServiceImportDefinitions)
            {
                AddServiceImport(account, import);
            }
        }
    }

    private bool ApprovedList(ExportDefinition export, string kind, out IReadOnlyList<string>? approved)
    {
        approved = null;
        if (export.Accounts is null)
        {
            return true;
        }
        var names = new List<string>();
        foreach (var name in export.Accounts)
        {
            if (_find(name) is null)
            {
                // Go reports the unknown name and still adds the export with the others.
                _errors.Add($"{_source}: \"{name}\" account not defined for {kind} export");
                continue;
            }
            names.Add(name);
        }
        approved = names;
        return true;
    }

    /// <summary>Go's setExportAuth: the account token position must point at a '*' of the subject.</summary>
    private bool CheckTokenPosition(ExportDefinition export, string kind)
    {
        if (export.AccountTokenPosition <= 0)
        {
            return true;
        }
        if (SubjectTokens.IsSingleWildcard(SubjectTokens.TokenAt(export.Subject.AsSpan(), export.AccountTokenPosition)))
        {
            return true;
        }
        _errors.Add($"{_source}: Error adding {kind} export \"{export.Subject}\": sublist: invalid subject");
        return false;
    }

    private void AddStreamImport(AccountOptions importer, StreamImportDefinition import)
    {
        if (_find(import.Account) is not { } exporter)
        {
            _errors.Add($"{_source}: \"{import.Account}\" account not defined for stream import");
            return;
        }
        var fail = (string reason) => _errors.Add($"{_source}: Error adding stream import \"{import.Subject}\": {reason}");
        if (!ExportApproves(exporter.StreamExports.Select(e => e.Grant), importer.Name, import.Subject,
            grant => _activation?.Invoke(exporter.Name, importer.Name, grant, import.Token, import.Subject, isService: false) ?? false))
        {
            fail("stream import not authorized");
            return;
        }
        var to = import.To;
        if (!string.IsNullOrEmpty(import.Prefix))
        {
            if (SubjectRules.HasWildcard(import.Prefix))
            {
                fail("stream import prefix can not contain wildcard tokens");
                return;
            }
            to = (import.Prefix.EndsWith('.') ? import.Prefix : import.Prefix + ".") + import.Subject;
        }
        if (string.IsNullOrEmpty(to))
        {
            to = import.Subject;
        }
        if (StreamImportFormsCycle(importer.Name, exporter, to))
        {
            fail("import forms a cycle");
            return;
        }
        if (SubjectRules.HasWildcard(import.Subject) && to != import.Subject
            && ImportTransform.Create(import.Subject, to, out var transformError) is null)
        {
            fail($"failed to create mapping transform for stream import subject \"{import.Subject}\" to \"{to}\": {transformError}");
            return;
        }
        if (importer.StreamImports.Any(s => s.Exporter == exporter.Name && s.From == import.Subject))
        {
            fail("stream import already exists");
            return;
        }
        importer.StreamImports.Add(new ResolvedStreamImport(exporter.Name, import.Subject, to) { Token = import.Token });
    }

    private void AddServiceImport(AccountOptions importer, ServiceImportDefinition import)
    {
        if (_find(import.Account) is not { } exporter)
        {
            _errors.Add($"{_source}: \"{import.Account}\" account not defined for service import");
            return;
        }
        var fail = (string reason) => _errors.Add($"{_source}: Error adding service import \"{import.Subject}\": {reason}");
        // Go's naming: "from" is the local subject, "to" the exporter's.
        var from = import.To;
        var to = import.Subject;
        if (!SubjectRules.IsValid(from) || !SubjectRules.IsValid(to))
        {
            fail("sublist: invalid subject");
            return;
        }
        if (!ExportApproves(exporter.ServiceExports.Select(e => e.Grant), importer.Name, to,
            grant => _activation?.Invoke(exporter.Name, importer.Name, grant, import.Token, to, isService: true) ?? false))
        {
            fail("service import not authorized");
            return;
        }
        if (ServiceImportFormsCycle(importer.Name, exporter, from))
        {
            fail("import forms a cycle");
            return;
        }
        if (importer.ServiceImports.FirstOrDefault(s => s.From == from) is { } duplicate)
        {
            fail($"duplicate service import subject \"{from}\", previously used in import for account \"{duplicate.Exporter}\", subject \"{duplicate.To}\"");
            return;
        }
        if (SubjectRules.HasWildcard(to) && to != from && ImportTransform.Create(from, to, out var transformError, checkReverse: true) is null)
        {
            fail($"failed to create mapping transform for service import subject \"{from}\" to \"{to}\": {transformError}");
            return;
        }
        importer.ServiceImports.Add(new ResolvedServiceImport(exporter.Name, from, to, import.Share) { Token = import.Token });
    }

    /// <summary>
    /// Go's checkStreamExportApproved/checkServiceExportApproved (exact subject first, then any covering
    /// export) and checkAuth; <paramref name="activation"/> decides exports that require a token.
    /// </summary>
    internal static bool ExportApproves(IEnumerable<ExportGrant> exports, string importer, string subject, Func<ExportGrant, bool>? activation = null)
    {
        var list = exports.ToList();
        if (list.Count == 0 || !SubjectRules.IsValid(subject))
        {
            return false;
        }
        foreach (var grant in list.OrderBy(e => e.Subject == subject ? 0 : 1))
        {
            if (grant.Subject != subject && !SubjectRules.IsSubsetMatch(subject, grant.Subject))
            {
                continue;
            }
            if (grant.AccountTokenPosition > 0)
            {
                return grant.Subject != subject && SubjectTokens.TokenAt(subject.AsSpan(), grant.AccountTokenPosition).SequenceEqual(importer);
            }
            if (grant.TokenRequired)
            {
                return activation?.Invoke(grant) ?? false;
            }
            return grant.Approved is null || grant.Approved.Contains(importer);
        }
        return false;
    }

    private bool StreamImportFormsCycle(string importer, AccountOptions exporter, string to) =>
        StreamCycle(exporter, to, new HashSet<string>(StringComparer.Ordinal) { importer });

    private bool StreamCycle(AccountOptions account, string to, HashSet<string> visited)
    {
        if (visited.Count >= 1024 || !account.StreamExports.Any(e => SubjectRules.IsSubsetMatch(to, e.Subject)))
        {
            return visited.Count >= 1024;
        }
        foreach (var import in account.StreamImports)
        {
            if (!SubjectRules.Collide(to, import.To))
            {
                continue;
            }
            if (visited.Contains(import.Exporter))
            {
                return true;
            }
            visited.Add(account.Name);
            var next = SubjectRules.IsSubsetMatch(import.To, to) ? import.To : to;
            if (_find(import.Exporter) is { } exporter && StreamCycle(exporter, next, visited))
            {
                return true;
            }
        }
        return false;
    }

    private bool ServiceImportFormsCycle(string importer, AccountOptions exporter, string from) =>
        ServiceCycle(exporter, from, new HashSet<string>(StringComparer.Ordinal) { importer });

    private bool ServiceCycle(AccountOptions account, string from, HashSet<string> visited)
    {
        if (visited.Count >= 1024)
        {
            return true;
        }
        foreach (var import in account.ServiceImports)
        {
            if (!SubjectRules.Collide(from, import.To))
            {
                continue;
            }
            if (visited.Contains(import.Exporter))
            {
                return true;
            }
            visited.Add(account.Name);
            var next = SubjectRules.IsSubsetMatch(import.From, from) ? import.From : from;
            if (_find(import.Exporter) is { } exporter && ServiceCycle(exporter, next, visited))
            {
                return true;
            }
        }
        return false;
    }
}
