using Nats.Server.Accounts;

namespace Nats.Server.Monitoring;

/// <summary>The exports, imports and pending responses of /accountz?acc=X, shaped like Go's accountInfo.</summary>
internal static class AccountImportExportDocuments
{
    /// <param name="jetStreamApiExported">The system account exports <c>$JS.API.&gt;</c> (<see cref="JetStreamApiImport"/>).</param>
    public static void Fill(AccountInfo info, Account account, Account? systemAccount, bool jetStreamApiExported)
    {
        var options = account.Options;
        var exports = new List<ExtExport>();
        var imports = new List<ExtImport>();
        AddSystemServices(account, systemAccount, exports, imports);
        if (jetStreamApiExported && account.IsSystem)
        {
            exports.Add(new ExtExport { Subject = JetStreamApiImport.Subject, Type = "service", ResponseType = "Singleton" });
        }
        if (account.JetStreamApiImported && systemAccount is not null)
        {
            imports.Add(new ExtImport { Subject = JetStreamApiImport.Subject, Account = systemAccount.Name, To = JetStreamApiImport.Subject, Type = "service" });
        }
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

    /// <summary>
    /// Go's addSystemAccountExports and the service imports every other account gets from it
    /// (registerSystemImports). We answer these subjects with direct subscriptions rather than through
    /// the import layer, but list them as Go does so /accountz reads the same.
    /// </summary>
    private static void AddSystemServices(Account account, Account? systemAccount, List<ExtExport> exports, List<ExtImport> imports)
    {
        if (systemAccount is null)
        {
            return;
        }
        if (ReferenceEquals(account, systemAccount))
        {
            exports.Add(new ExtExport { Subject = "$SYS.REQ.ACCOUNT.*.CONNZ", Type = "service", ResponseType = "Streamed" });
            exports.Add(new ExtExport { Subject = "$SYS.REQ.ACCOUNT.*.STATZ", Type = "service", ResponseType = "Streamed" });
            exports.Add(new ExtExport { Subject = "$SYS.DEBUG.SUBSCRIBERS", Type = "service", ResponseType = "Singleton" });
            return;
        }
        var prefix = "$SYS.REQ.ACCOUNT." + account.Name;
        imports.Add(new ExtImport { Subject = "$SYS.REQ.ACCOUNT.PING.CONNZ", Account = systemAccount.Name, To = prefix + ".CONNZ", Type = "service" });
        imports.Add(new ExtImport { Subject = "$SYS.REQ.SERVER.PING.CONNZ", Account = systemAccount.Name, To = prefix + ".CONNZ", Type = "service" });
        imports.Add(new ExtImport { Subject = "$SYS.REQ.ACCOUNT.PING.STATZ", Account = systemAccount.Name, To = prefix + ".STATZ", Type = "service" });
    }

    private static List<string>? Approved(IReadOnlyList<string>? approved) => approved is { Count: > 0 } ? [.. approved] : null;
}
