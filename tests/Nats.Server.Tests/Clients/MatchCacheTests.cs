using Nats.Server.Clients;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Clients;

public class MatchCacheTests
{
    private static Subscription Sub(string subject, string sid) =>
        new(null!, System.Text.Encoding.UTF8.GetBytes(subject), null, System.Text.Encoding.UTF8.GetBytes(sid));

    [Fact]
    public void Hit_ReturnsTheCachedResult_UntilTheIndexChanges()
    {
        var subList = new SubList();
        Assert.True(subList.Insert(Sub("foo", "1")));
        var cache = new MatchCache();

        var first = cache.Lookup(subList, "foo"u8);
        Assert.Single(first.Plain);
        Assert.Same(first, cache.Lookup(subList, "foo"u8));

        Assert.True(subList.Insert(Sub("foo", "2")));
        var second = cache.Lookup(subList, "foo"u8);
        Assert.NotSame(first, second);
        Assert.Equal(2, second.Plain.Length);
    }

    [Fact]
    public void Clear_ForgetsEverything_EvenAtTheSameGeneration()
    {
        var first = new SubList();
        Assert.True(first.Insert(Sub("foo", "1")));
        var other = new SubList();
        Assert.True(other.Insert(Sub("bar", "1")));
        var cache = new MatchCache();
        Assert.Single(cache.Lookup(first, "foo"u8).Plain);

        cache.Clear();
        Assert.Equal(0, cache.Count);
        Assert.Empty(cache.Lookup(other, "foo"u8).Plain);
    }

    [Fact]
    public void StaysBounded()
    {
        var subList = new SubList();
        var cache = new MatchCache();
        for (var i = 0; i < 2000; i++)
        {
            cache.Lookup(subList, System.Text.Encoding.UTF8.GetBytes($"s.{i}"));
        }
        Assert.InRange(cache.Count, 1, 512);
    }
}
