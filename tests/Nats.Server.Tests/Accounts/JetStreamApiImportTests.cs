using Nats.Server.Accounts;
using Nats.Server.Configuration;
using Nats.Server.JetStream.Configuration;

namespace Nats.Server.Tests.Accounts;

/// <summary>Which accounts of a server without JetStream get Go's <c>$JS.API.&gt;</c> import from the system account.</summary>
public class JetStreamApiImportTests
{
    private static ServerOptions Options(bool cluster, bool jetStream, params AccountOptions[] accounts)
    {
        var options = new ServerOptions();
        options.Cluster.Enabled = cluster;
        options.JetStream.Enabled = jetStream;
        options.Accounts.AddRange(accounts);
        if (accounts.Any(a => a.Name == "SYS"))
        {
            options.SystemAccount = "SYS";
        }
        return options;
    }

    private static AccountOptions WithJetStream(string name) => new(name) { JetStreamLimits = new JetStreamAccountLimits() };

    private static ServiceImportRoute? ImportOf(Account account) =>
        account.SubList.Match("$JS.API.STREAM.INFO.S"u8).Plain.Select(s => s.Route).OfType<ServiceImportRoute>().SingleOrDefault();

    [Fact]
    public void ARoutedServerWithoutJetStream_ImportsTheApiIntoItsJetStreamAccounts()
    {
        var registry = new AccountRegistry(Options(cluster: true, jetStream: false, new AccountOptions("SYS"), WithJetStream("APP"), new AccountOptions("OTHER")));
        var route = ImportOf(registry.Find("APP")!);
        Assert.NotNull(route);
        Assert.Same(registry.System, route.Exporter);
        Assert.True(route.IsJetStreamApi);
        Assert.True(route.ToSystemAccount);
        Assert.True(registry.Find("APP")!.JetStreamApiImported);
        Assert.Null(ImportOf(registry.Find("OTHER")!));
        Assert.Null(ImportOf(registry.Global));
    }

    [Fact]
    public void WithOnlyTheGlobalAndTheSystemAccount_TheGlobalAccountImportsIt()
    {
        var registry = new AccountRegistry(Options(cluster: true, jetStream: false));
        Assert.NotNull(ImportOf(registry.Global));
    }

    [Theory]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void StandaloneOrRunningJetStream_NoImport(bool cluster, bool jetStream)
    {
        var registry = new AccountRegistry(Options(cluster, jetStream, new AccountOptions("SYS"), WithJetStream("APP")));
        Assert.Null(ImportOf(registry.Find("APP")!));
        Assert.False(registry.Find("APP")!.JetStreamApiImported);
    }

    [Theory]
    [InlineData("$JS.API.CONSUMER.MSG.NEXT.S.C", true)]
    [InlineData("$JS.API.DIRECT.GET.S", true)]
    [InlineData("$JS.API.CONSUMER.INFO.S.C", false)]
    [InlineData("$JS.API.INFO", false)]
    public void PullsAndDirectGetsAreAnsweredInTheStreamsAccount(string subject, bool inPlace)
    {
        Assert.Equal(inPlace, JetStreamApiImport.AnsweredInPlace(System.Text.Encoding.ASCII.GetBytes(subject)));
    }
}
