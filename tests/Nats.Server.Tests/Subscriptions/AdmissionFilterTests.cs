using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Subscriptions;

public class AdmissionFilterTests
{
    [Fact]
    public void AdmitsAHash_OnlyOnItsSecondSighting()
    {
        var filter = new AdmissionFilter();
        Assert.False(filter.Admit(12345));
        Assert.True(filter.Admit(12345));
        Assert.True(filter.Admit(12345));
    }

    [Fact]
    public void AnotherHashInTheSameSlot_ReplacesTheFirstSighting()
    {
        var filter = new AdmissionFilter();
        Assert.False(filter.Admit(1));
        Assert.False(filter.Admit(1 + 256));
        Assert.False(filter.Admit(1));
        Assert.True(filter.Admit(1));
    }
}
