using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Clients;

public class ClientSubscriptionsTests
{
    private static Subscription Sub(string subject, string sid) => new(null!, Encoding.UTF8.GetBytes(subject), null, Encoding.UTF8.GetBytes(sid));

    [Fact]
    public void Add_KeepsTheMapAndTheIndexInStep()
    {
        var account = new Account("A");
        var subscriptions = new ClientSubscriptions();
        var foo = Sub("foo", "1");
        Assert.True(subscriptions.Add(foo, account.SubList));
        Assert.Equal(1, subscriptions.CountAndFind("1"u8, out var exists));
        Assert.True(exists);
        Assert.Same(foo, subscriptions.Find("1"u8));
        Assert.Single(account.SubList.Match("foo"u8).Plain);

        Assert.False(subscriptions.Add(Sub("bad..subject", "2"), account.SubList));
        Assert.Equal(1, subscriptions.CountAndFind("2"u8, out exists));
        Assert.False(exists);
    }

    [Fact]
    public void Remove_TakesOnlyTheSameInstance()
    {
        var account = new Account("A");
        var subscriptions = new ClientSubscriptions();
        var first = Sub("foo", "1");
        Assert.True(subscriptions.Add(first, account.SubList));
        Assert.False(subscriptions.Remove(Sub("foo", "1"), account));
        Assert.Equal(1, subscriptions.Count);
        Assert.True(subscriptions.Remove(first, account));
        Assert.False(subscriptions.Remove(first, account));
        Assert.Equal(0, subscriptions.Count);
        Assert.Empty(account.SubList.Match("foo"u8).Plain);
    }

    [Fact]
    public void RemoveAll_EmptiesTheIndex_AndRemembersWhatWasHeld()
    {
        var account = new Account("A");
        var subscriptions = new ClientSubscriptions();
        Assert.True(subscriptions.Add(Sub("foo", "1"), account.SubList));
        Assert.True(subscriptions.Add(Sub("bar", "2"), account.SubList));
        Assert.Equal(2, subscriptions.Snapshot().Count);
        Assert.Empty(subscriptions.AtClose);

        subscriptions.RemoveAll(account);
        Assert.Equal(0, subscriptions.Count);
        Assert.Equal(2, subscriptions.AtClose.Count);
        Assert.Empty(account.SubList.Match("foo"u8).Plain);
        Assert.Empty(account.SubList.Match("bar"u8).Plain);
    }
}
