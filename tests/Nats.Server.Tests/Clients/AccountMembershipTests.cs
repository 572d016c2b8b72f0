using Nats.Server.Accounts;
using Nats.Server.Clients;

namespace Nats.Server.Tests.Clients;

public class AccountMembershipTests
{
    private static Account Joined(string name, int maxConnections = AccountLimits.NoLimit)
    {
        var account = new Account(name, new AccountOptions(name) { Limits = AccountLimits.Unlimited with { MaxConnections = maxConnections } });
        return account;
    }

    [Fact]
    public void Move_CountsTheClientInTheTargetOnly()
    {
        var global = Joined("$G");
        Assert.True(global.TryAddClient());
        var membership = new AccountMembership(global);
        var target = Joined("A");

        Assert.Equal(AccountMove.Moved, membership.MoveTo(target));
        Assert.Same(target, membership.Account);
        Assert.Equal(0, global.ClientCount);
        Assert.Equal(1, target.ClientCount);
        Assert.Equal(AccountMove.AlreadyThere, membership.MoveTo(target));
        Assert.Equal(1, target.ClientCount);
    }

    [Fact]
    public void FullTarget_LeavesTheClientWhereItWas()
    {
        var global = Joined("$G");
        Assert.True(global.TryAddClient());
        var full = Joined("A", maxConnections: 1);
        Assert.True(full.TryAddClient());
        var membership = new AccountMembership(global);

        Assert.Equal(AccountMove.TargetFull, membership.MoveTo(full));
        Assert.Same(global, membership.Account);
        Assert.Equal(1, global.ClientCount);
        Assert.Equal(1, full.ClientCount);
    }

    [Fact]
    public void Release_LeavesOnce_AndNothingJoinsAfterwards()
    {
        var global = Joined("$G");
        Assert.True(global.TryAddClient());
        var membership = new AccountMembership(global);
        membership.Release();
        membership.Release();
        Assert.True(membership.Released);
        Assert.Equal(0, global.ClientCount);

        var target = Joined("A");
        Assert.Equal(AccountMove.Released, membership.MoveTo(target));
        Assert.Equal(0, target.ClientCount);
    }
}
