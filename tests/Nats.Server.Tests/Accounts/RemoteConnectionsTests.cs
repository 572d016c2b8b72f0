using Nats.Server.Accounts;

namespace Nats.Server.Tests.Accounts;

public class RemoteConnectionsTests
{
    private static Account Limited(int maxConnections, int maxLeafNodes = AccountLimits.NoLimit) =>
        new("A", new AccountOptions("A") { Limits = AccountLimits.Unlimited with { MaxConnections = maxConnections, MaxLeafNodes = maxLeafNodes } });

    [Fact]
    public void EachServersReport_ReplacesItsPreviousOne()
    {
        var remote = new RemoteConnections();
        remote.Update("S1", 3, 1);
        remote.Update("S2", 2, 0);
        remote.Update("S1", 1, 2);

        Assert.Equal(3, remote.Clients);
        Assert.Equal(2, remote.Leafs);
    }

    [Fact]
    public void ARemovedServer_NoLongerCounts_AndRemovingTwiceChangesNothing()
    {
        var remote = new RemoteConnections();
        remote.Update("S1", 3, 1);
        remote.Update("S2", 2, 0);

        remote.Remove("S1");
        remote.Remove("S1");
        remote.Remove("unknown");

        Assert.Equal(2, remote.Clients);
        Assert.Equal(0, remote.Leafs);
    }

    [Fact]
    public void OtherServersClients_CountAgainstMaxConnections()
    {
        var account = Limited(maxConnections: 3);
        Assert.True(account.TryAddClient());
        account.Remote.Update("S1", 2, 0);

        Assert.False(account.TryAddClient());
        Assert.Equal(1, account.ClientCount);

        account.Remote.Update("S1", 1, 0);
        Assert.True(account.TryAddClient());
        Assert.Equal(2, account.ClientCount);
    }

    [Fact]
    public void OtherServersLeafs_CountAgainstMaxLeafNodes()
    {
        var account = Limited(AccountLimits.NoLimit, maxLeafNodes: 1);
        account.Remote.Update("S1", 5, 1);

        Assert.False(account.TryAddLeaf());
        Assert.True(account.TryAddClient());

        account.Remote.Remove("S1");
        Assert.True(account.TryAddLeaf());
    }
}
