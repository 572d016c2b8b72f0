using System.Text;
using Nats.Server.Accounts;

namespace Nats.Server.Tests.Accounts;

public class ServiceResponsesTests
{
    private static (Account Exporter, Account Importer, ServiceImportRoute Route) Setup(TimeSpan threshold)
    {
        var exporterOptions = new AccountOptions("A");
        var export = new ResolvedServiceExport("svc.>", null, 0, ServiceResponseType.Streamed, threshold, null);
        exporterOptions.ServiceExports.Add(export);
        var exporter = new Account("A", exporterOptions);
        var importer = new Account("B");
        var route = new ServiceImportRoute(importer, exporter, new ResolvedServiceImport("A", "svc.>", "svc.>", false), export);
        return (exporter, importer, route);
    }

    [Fact]
    public void ReplySubjectsShareTheAccountPrefixAndAreUnique()
    {
        var (exporter, importer, route) = Setup(TimeSpan.FromHours(1));
        var first = exporter.Responses.Create(importer, "_INBOX.1"u8, route);
        var second = exporter.Responses.Create(importer, "_INBOX.2"u8, route);
        var a = Encoding.ASCII.GetString(first.Subject);
        var b = Encoding.ASCII.GetString(second.Subject);
        Assert.Matches(@"^_R_\.[0-9A-Za-z]{6}\.[0-9A-Za-z]{6}$", a);
        Assert.Equal(a[..11], b[..11]);
        Assert.NotEqual(a, b);
        Assert.Same(first, exporter.Responses.Find(first.Subject));
        Assert.Equal("_INBOX.2", Encoding.ASCII.GetString(exporter.Responses.Find(second.Subject)!.Reply));
    }

    [Fact]
    public void TheFirstResponseCreatesOneWildcardRouteInTheExporter()
    {
        var (exporter, importer, route) = Setup(TimeSpan.FromHours(1));
        Assert.Equal(0, exporter.SubList.Count);
        var entry = exporter.Responses.Create(importer, "_INBOX.1"u8, route);
        exporter.Responses.Create(importer, "_INBOX.2"u8, route);
        Assert.Equal(1, exporter.SubList.Count);
        var match = exporter.SubList.Match(entry.Subject);
        Assert.IsType<ResponseRoute>(Assert.Single(match.Plain).Route);
        Assert.True(match.HasInternal);
    }

    [Fact]
    public void SweepDropsEntriesPastTheirThresholdOnly()
    {
        var (exporter, importer, expiring) = Setup(TimeSpan.Zero);
        var (_, _, lasting) = Setup(TimeSpan.FromHours(1));
        var old = exporter.Responses.Create(importer, "_INBOX.old"u8, expiring);
        var kept = exporter.Responses.Create(importer, "_INBOX.kept"u8, lasting);
        exporter.Responses.Sweep();
        Assert.Null(exporter.Responses.Find(old.Subject));
        Assert.Same(kept, exporter.Responses.Find(kept.Subject));
        Assert.Equal(1, exporter.Responses.Count);
    }

    [Fact]
    public void RemoveIsOnceOnly()
    {
        var (exporter, importer, route) = Setup(TimeSpan.FromHours(1));
        var entry = exporter.Responses.Create(importer, "_INBOX.1"u8, route);
        Assert.True(exporter.Responses.Remove(entry));
        Assert.False(exporter.Responses.Remove(entry));
    }
}

public class ImportDefinitionsInCodeTests
{
    [Fact]
    public void DefinitionsGivenInCodeAreResolvedWhenTheRegistryIsBuilt()
    {
        var options = new Nats.Server.Configuration.ServerOptions();
        var a = new AccountOptions("A");
        a.ExportDefinitions.Add(new ExportDefinition("news.>", isService: false));
        var b = new AccountOptions("B");
        b.StreamImportDefinitions.Add(new StreamImportDefinition("A", "news.>", null, "a"));
        options.Accounts.Add(a);
        options.Accounts.Add(b);
        var registry = new AccountRegistry(options);
        Assert.Equal(new ResolvedStreamImport("A", "news.>", "a.news.>"), Assert.Single(b.StreamImports));
        var route = Assert.Single(registry.Find("A")!.SubList.Match("news.x"u8).Plain).Route;
        Assert.Same(registry.Find("B"), Assert.IsType<StreamImportRoute>(route).Importer);
    }

    [Fact]
    public void AnUnauthorizedImportGivenInCodeRefusesToStart()
    {
        var options = new Nats.Server.Configuration.ServerOptions();
        var a = new AccountOptions("A");
        a.ExportDefinitions.Add(new ExportDefinition("news.>", isService: false) { Accounts = ["C"] });
        var b = new AccountOptions("B");
        b.StreamImportDefinitions.Add(new StreamImportDefinition("A", "news.x", null, null));
        options.Accounts.AddRange([a, b, new AccountOptions("C")]);
        var error = Assert.Throws<InvalidOperationException>(() => new AccountRegistry(options));
        Assert.Equal("accounts: Error adding stream import \"news.x\": stream import not authorized", error.Message);
    }
}
