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
            var subject = System.Text.Encoding.UTF8.GetBytes($"s.{i}");
            cache.Lookup(subList, subject);
            cache.Lookup(subList, subject);
        }
        Assert.InRange(cache.Count, 1, 512);
    }

    [Fact]
    public void OneShotSubjects_AreMatchedButNotCached_RepeatedOnesAre()
    {
        var subList = new SubList();
        Assert.True(subList.Insert(Sub("_INBOX.abc.*", "1")));
        var cache = new MatchCache();
        for (var i = 0; i < 100; i++)
        {
            Assert.Single(cache.Lookup(subList, System.Text.Encoding.UTF8.GetBytes($"_INBOX.abc.{i}")).Plain);
        }
        Assert.Equal(0, cache.Count);

        // The last subject seen is still remembered in its slot (an earlier one may have been
        // replaced by a later subject hashing to the same slot: hashes are seeded per process).
        cache.Lookup(subList, "_INBOX.abc.99"u8);
        Assert.Equal(1, cache.Count);
    }

    [Fact]
    public void UncachedSubject_StillSeesSubscriptionChanges()
    {
        var subList = new SubList();
        var cache = new MatchCache();
        Assert.Empty(cache.Lookup(subList, "_INBOX.abc.1"u8).Plain);
        Assert.True(subList.Insert(Sub("_INBOX.abc.*", "1")));
        Assert.Single(cache.Lookup(subList, "_INBOX.abc.2"u8).Plain);
        Assert.Single(cache.Lookup(subList, "_INBOX.abc.1"u8).Plain);
    }
}
