using System.Text;
using Nats.Server.Configuration;
using Nats.Server.Subscriptions;

namespace Nats.Server.Accounts;

/// <summary>
/// Go's checkJetStreamExports and enableAllJetStreamServiceImportsAndMappings on a server that does not run
/// JetStream but has routes or gateways: the system account exports <c>$JS.API.&gt;</c> and every account with
/// JetStream enabled imports it, so its clients' API requests enter the system account with the client info
/// header (Go's JetStream API ignores requests without one) and reach the cluster's JetStream servers, whose
/// answers come back through the import's response map. With only <c>$G</c> and the system account, <c>$G</c>
/// gets the import too (Go's "simple mixed mode setup").
/// </summary>
internal static class JetStreamApiImport
{
    public const string Subject = "$JS.API.>";

    private static ReadOnlySpan<byte> PullPrefix => "$JS.API.CONSUMER.MSG.NEXT."u8;

    private static ReadOnlySpan<byte> DirectGetPrefix => "$JS.API.DIRECT.GET."u8;

    /// <summary>Go's condition: JetStream off here and not standalone (a cluster or gateway port).</summary>
    public static bool Applies(ServerOptions options) => !options.JetStream.Enabled && (options.Cluster.Enabled || options.Gateway.Enabled);

    /// <summary>Whether <paramref name="account"/> gets the import: JetStream enabled for it, or the lone <c>$G</c>.</summary>
    public static bool Wanted(Account account, Account system, int accountCount) =>
        !ReferenceEquals(account, system) &&
        (account.Options.JetStreamLimits is not null || (account.Name == Account.GlobalAccountName && accountCount == 2));

    /// <summary>The export the import resolves against (Go's AddServiceExport(jsAllAPI, nil): public, singleton).</summary>
    private static readonly ResolvedServiceExport Export =
        new(Subject, null, 0, ServiceResponseType.Singleton, ResolvedServiceExport.DefaultResponseThreshold, null);

    /// <summary>Places the import in <paramref name="importer"/>'s index unless it already imports that subject (Go's serviceImportExists).</summary>
    public static void Wire(Account importer, Account system)
    {
        if (importer.Options.ServiceImports.Any(i => i.From == Subject))
        {
            return;
        }
        var import = new ResolvedServiceImport(system.Name, Subject, Subject, Share: false);
        var route = new ServiceImportRoute(importer, system, import, Export);
        var subscription = new Subscription(route, Encoding.UTF8.GetBytes(Subject), null, importer.NextInternalSid());
        if (importer.SubList.Insert(subscription))
        {
            importer.ImportSubscriptions.Add((importer, subscription));
            importer.JetStreamApiImported = true;
        }
    }

    /// <summary>Go's processServiceImport skips pulls and direct gets through this import: the stream's account answers them itself,
    /// and mapping them would only leave response entries to expire.</summary>
    public static bool AnsweredInPlace(ReadOnlySpan<byte> subject) => subject.StartsWith(PullPrefix) || subject.StartsWith(DirectGetPrefix);
}
