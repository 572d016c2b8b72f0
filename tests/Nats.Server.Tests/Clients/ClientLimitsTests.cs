using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Clients;

public class ClientLimitsTests
{
    private static AccountLimits Account(int maxPayload, int maxSubscriptions) =>
        AccountLimits.Unlimited with { MaxPayload = maxPayload, MaxSubscriptions = maxSubscriptions };

    [Fact]
    public void NoAccountLimits_TakeTheServers()
    {
        var limits = ClientLimits.Compute(AccountLimits.Unlimited, new ServerOptions { MaxPayload = 1000, MaxSubscriptions = 5 });
        Assert.Equal(new ClientLimits(1000, 5, false, false), limits);
    }

    [Fact]
    public void ZeroServerSubscriptions_MeansNoLimit()
    {
        var limits = ClientLimits.Compute(AccountLimits.Unlimited, new ServerOptions { MaxSubscriptions = 0 });
        Assert.Equal(AccountLimits.NoLimit, limits.MaxSubscriptions);
    }

    [Fact]
    public void LowerAccountLimits_Win_WithoutAnOverrideNotice()
    {
        var limits = ClientLimits.Compute(Account(100, 2), new ServerOptions { MaxPayload = 1000, MaxSubscriptions = 5 });
        Assert.Equal(new ClientLimits(100, 2, false, false), limits);
    }

    [Fact]
    public void LowerServerLimits_OverrideTheAccounts_AndSaySo()
    {
        var limits = ClientLimits.Compute(Account(5000, 50), new ServerOptions { MaxPayload = 1000, MaxSubscriptions = 5 });
        Assert.Equal(new ClientLimits(1000, 5, true, true), limits);
    }

    [Fact]
    public void NoLimitAnywhere_LeavesThePayloadUnbounded()
    {
        var limits = ClientLimits.Compute(AccountLimits.Unlimited, new ServerOptions { MaxPayload = 0 });
        Assert.Equal(int.MaxValue, limits.MaxPayload);
    }
}
