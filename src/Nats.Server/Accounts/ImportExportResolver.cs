using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Subjects;

namespace Nats.Server.Accounts;

/// <summary>
/// The second half of Go's parseAccounts: stream exports, service exports, stream imports, service
/// imports, in that order, each checked against what the earlier steps accepted (an import needs a
/// matching export that approves the importer, and must not close a cycle). Errors carry the accounts
/// block's position, as in Go.
/// </summary>
internal sealed class ImportExportResolver(ServerOptions options, string source, List<string> errors)
{
    private readonly Dictionary<string, AccountOptions> _accounts = options.Accounts.ToDictionary(a => a.Name, StringComparer.Ordinal);

    public void Run()
    {
        foreach (var account in options.Accounts)
        {
            foreach (var export in account.ExportDefinitions.Where(e => !e.IsService))
            {
                if (ApprovedList(export, "stream", out var approved) && CheckTokenPosition(export, "stream"))
                {
                    account.StreamExports.RemoveAll(e => e.Subject == export.Subject);
                    account.StreamExports.Add(new ResolvedStreamExport(export.Subject, approved, export.AccountTokenPosition));
                }
            }
        }
        foreach (var account in options.Accounts)
        {
            foreach (var export in account.ExportDefinitions.Where(e => e.IsService))
            {
                if (!ApprovedList(export, "service", out var approved) || !CheckTokenPosition(export, "service"))
                {
                    continue;
                }
                if (export.Latency is not null && options.NoSystemAccount)
                {
                    errors.Add($"{source}: Error adding service latency sampling for \"{export.Subject}\": system account not setup");
                }
                account.ServiceExports.RemoveAll(e => e.Subject == export.Subject);
                account.ServiceExports.Add(new ResolvedServiceExport(export.Subject, approved, export.AccountTokenPosition, export.ResponseType,
                    export.ResponseThreshold ?? ResolvedServiceExport.DefaultResponseThreshold, export.Latency));
            }
        }
        foreach (var account in options.Accounts)
        {
            foreach (var import in account.StreamImportDefinitions)
            {
                AddStreamImport(account, import);
            }
        }
        foreach (var account in options.Accounts)
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
            if (!_accounts.ContainsKey(name))
            {
                // Go reports the unknown name and still adds the export with the others.
                errors.Add($"{source}: \"{name}\" account not defined for {kind} export");
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
        errors.Add($"{source}: Error adding {kind} export \"{export.Subject}\": sublist: invalid subject");
        return false;
    }

    private void AddStreamImport(AccountOptions importer, StreamImportDefinition import)
    {
        if (!_accounts.TryGetValue(import.Account, out var exporter))
        {
            errors.Add($"{source}: \"{import.Account}\" account not defined for stream import");
            return;
        }
        var fail = (string reason) => errors.Add($"{source}: Error adding stream import \"{import.Subject}\": {reason}");
        if (!ExportApproves(exporter.StreamExports.Select(e => (e.Subject, e.Approved, e.AccountTokenPosition)), importer.Name, import.Subject))
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
        importer.StreamImports.Add(new ResolvedStreamImport(exporter.Name, import.Subject, to));
    }

    private void AddServiceImport(AccountOptions importer, ServiceImportDefinition import)
    {
        if (!_accounts.TryGetValue(import.Account, out var exporter))
        {
            errors.Add($"{source}: \"{import.Account}\" account not defined for service import");
            return;
        }
        var fail = (string reason) => errors.Add($"{source}: Error adding service import \"{import.Subject}\": {reason}");
        // Go's naming: "from" is the local subject, "to" the exporter's.
        var from = import.To;
        var to = import.Subject;
        if (!SubjectRules.IsValid(from) || !SubjectRules.IsValid(to))
        {
            fail("sublist: invalid subject");
            return;
        }
        if (!ExportApproves(exporter.ServiceExports.Select(e => (e.Subject, e.Approved, e.AccountTokenPosition)), importer.Name, to))
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
        importer.ServiceImports.Add(new ResolvedServiceImport(exporter.Name, from, to, import.Share));
    }

    /// <summary>Go's checkStreamExportApproved/checkServiceExportApproved (exact subject first, then any covering export).</summary>
    internal static bool ExportApproves(IEnumerable<(string Subject, IReadOnlyList<string>? Approved, int TokenPosition)> exports, string importer, string subject)
    {
        var list = exports.ToList();
        if (list.Count == 0 || !SubjectRules.IsValid(subject))
        {
            return false;
        }
        foreach (var (exportSubject, approved, position) in list.OrderBy(e => e.Subject == subject ? 0 : 1))
        {
            if (exportSubject != subject && !SubjectRules.IsSubsetMatch(subject, exportSubject))
            {
                continue;
            }
            if (position > 0)
            {
                return exportSubject != subject && SubjectTokens.TokenAt(subject.AsSpan(), position).SequenceEqual(importer);
            }
            return approved is null || approved.Contains(importer);
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
            if (_accounts.TryGetValue(import.Exporter, out var exporter) && StreamCycle(exporter, next, visited))
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
            if (_accounts.TryGetValue(import.Exporter, out var exporter) && ServiceCycle(exporter, next, visited))
            {
                return true;
            }
        }
        return false;
    }
}
