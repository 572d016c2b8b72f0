using Nats.Server.Accounts;

namespace Nats.Server.Monitoring;

/// <summary>The exports, imports and pending responses of /accountz?acc=X, shaped like Go's accountInfo.</summary>
internal static class AccountImportExportDocuments
{
    public static void Fill(AccountInfo info, Account account)
    {
        var options = account.Options;
        var exports = new List<ExtExport>();
        foreach (var export in options.ServiceExports)
        {
            exports.Add(new ExtExport
            {
                Subject = export.Subject,
                Type = "service",
                TokenRequired = export.Approved is { Count: 0 },
                ResponseType = export.ResponseType.ToString(),
                Latency = export.Latency is null ? null : new ExtServiceLatency { Sampling = export.Latency.Sampling, Results = export.Latency.Subject },
                ApprovedAccounts = Approved(export.Approved),
            });
        }
        foreach (var export in options.StreamExports)
        {
            exports.Add(new ExtExport
            {
                Subject = export.Subject,
                Type = "stream",
                TokenRequired = export.Approved is { Count: 0 },
                ApprovedAccounts = Approved(export.Approved),
            });
        }
        var imports = new List<ExtImport>();
        foreach (var import in options.StreamImports)
        {
            imports.Add(new ExtImport { Subject = import.From, Account = import.Exporter, LocalSubject = import.To, Type = "stream" });
        }
        foreach (var import in options.ServiceImports)
        {
            imports.Add(new ExtImport { Subject = import.From, Account = import.Exporter, To = import.To, Type = "service", Share = import.Share });
        }
        // Go's encoder leaves out empty lists and maps (omitempty).
        info.Exports = exports.Count > 0 ? exports : null;
        info.Imports = imports.Count > 0 ? imports : null;
        var pending = account.ResponsesIfCreated?.Snapshot();
        if (pending is { Count: > 0 })
        {
            info.Responses = pending.ToDictionary(
                e => System.Text.Encoding.ASCII.GetString(e.Subject),
                e => new ExtResponse
                {
                    Subject = System.Text.Encoding.ASCII.GetString(e.Subject),
                    Account = e.Requester.Name,
                    To = System.Text.Encoding.UTF8.GetString(e.Reply),
                    Share = e.Import.Share,
                });
        }
    }

    private static List<string>? Approved(IReadOnlyList<string>? approved) => approved is { Count: > 0 } ? [.. approved] : null;
}
