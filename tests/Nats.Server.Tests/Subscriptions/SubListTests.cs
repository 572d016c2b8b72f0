using System.Text;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Subscriptions;

public class SubListTests
{
    private static Subscription Sub(string subject, string? queue = null, string sid = "1") =>
        new(null!, Encoding.UTF8.GetBytes(subject), queue is null ? null : Encoding.UTF8.GetBytes(queue), Encoding.UTF8.GetBytes(sid));

    private static SubListResult Match(SubList list, string subject) => list.Match(Encoding.UTF8.GetBytes(subject));

    [Fact]
    public void LiteralSubscription_MatchesOnlyItsSubject()
    {
        var list = new SubList();
        var sub = Sub("foo.bar");
        Assert.True(list.Insert(sub));
        Assert.Same(sub, Assert.Single(Match(list, "foo.bar").Plain));
        Assert.True(Match(list, "foo.baz").IsEmpty);
        Assert.True(Match(list, "foo").IsEmpty);
        Assert.True(Match(list, "foo.bar.baz").IsEmpty);
    }

    [Fact]
    public void PartialWildcard_MatchesExactlyOneToken()
    {
        var list = new SubList();
        var sub = Sub("foo.*.baz");
        list.Insert(sub);
        Assert.Single(Match(list, "foo.bar.baz").Plain);
        Assert.Single(Match(list, "foo.x.baz").Plain);
        Assert.True(Match(list, "foo.baz").IsEmpty);
        Assert.True(Match(list, "foo.a.b.baz").IsEmpty);
    }

    [Fact]
    public void FullWildcard_MatchesOneOrMoreTokens()
    {
        var list = new SubList();
        list.Insert(Sub("foo.>"));
        Assert.True(Match(list, "foo").IsEmpty);
        Assert.Single(Match(list, "foo.bar").Plain);
        Assert.Single(Match(list, "foo.bar.baz.qux").Plain);
        Assert.True(Match(list, "bar.foo").IsEmpty);
    }

    [Fact]
    public void OverlappingSubscriptions_AreAllReturned()
    {
        var list = new SubList();
        var subs = new[] { Sub("a.b.c", sid: "1"), Sub("a.*.c", sid: "2"), Sub("a.>", sid: "3"), Sub(">", sid: "4"), Sub("*.b.*", sid: "5"), Sub("a.b", sid: "6") };
        foreach (var s in subs)
        {
            list.Insert(s);
        }
        var matched = Match(list, "a.b.c").Plain.Select(s => s.SidString).Order().ToArray();
        Assert.Equal(["1", "2", "3", "4", "5"], matched);
    }

    [Fact]
    public void QueueSubscriptions_AreGroupedByQueueName()
    {
        var list = new SubList();
        list.Insert(Sub("foo", "q1", "1"));
        list.Insert(Sub("foo", "q1", "2"));
        list.Insert(Sub("foo.>".Replace(".>", ""), "q2", "3"));
        list.Insert(Sub("*", "q1", "4"));
        list.Insert(Sub("foo", sid: "5"));
        var result = Match(list, "foo");
        Assert.Single(result.Plain);
        Assert.Equal(2, result.QueueGroups.Length);
        var sizes = result.QueueGroups.Select(g => g.Length).Order().ToArray();
        Assert.Equal([1, 3], sizes);
    }

    [Theory]
    [InlineData("")]
    [InlineData("foo..bar")]
    [InlineData(".foo")]
    [InlineData("foo.")]
    [InlineData("foo.>.bar")]
    [InlineData("foo bar")]
    public void InvalidSubjects_AreRefused(string subject)
    {
        var list = new SubList();
        Assert.False(list.Insert(Sub(subject)));
        Assert.Equal(0, list.Count);
    }

    [Fact]
    public void PublishedWildcardToken_IsMatchedOnlyByWildcardSubscriptions_AndOnlyOnce()
    {
        var list = new SubList();
        list.Insert(Sub("*", sid: "1"));
        list.Insert(Sub("foo.*", sid: "2"));
        list.Insert(Sub("foo.bar", sid: "3"));
        Assert.Equal("1", Assert.Single(Match(list, "*").Plain).SidString);
        Assert.Equal("2", Assert.Single(Match(list, "foo.*").Plain).SidString);
    }

    [Fact]
    public void PublishedSubjectWithEmptyToken_MatchesNothing()
    {
        var list = new SubList();
        list.Insert(Sub(">"));
        Assert.True(Match(list, "foo..bar").IsEmpty);
        Assert.True(Match(list, "").IsEmpty);
    }

    [Fact]
    public void CachedResult_IsRefreshedWhenAMatchingSubscriptionArrivesOrLeaves()
    {
        var list = new SubList();
        var first = Sub("foo.bar", sid: "1");
        list.Insert(first);
        Assert.Single(Match(list, "foo.bar").Plain);

        var wildcard = Sub("foo.*", sid: "2");
        list.Insert(wildcard);
        Assert.Equal(2, Match(list, "foo.bar").Plain.Length);

        list.Remove(first);
        Assert.Same(wildcard, Assert.Single(Match(list, "foo.bar").Plain));

        list.Remove(wildcard);
        Assert.True(Match(list, "foo.bar").IsEmpty);
    }

    [Fact]
    public void RepeatedMatch_IsServedFromTheCache_FromItsSecondSighting()
    {
        var list = new SubList();
        list.Insert(Sub("foo"));
        var a = Match(list, "foo");
        Assert.Equal(0, list.GetStats().CacheEntries);
        var b = Match(list, "foo");
        Assert.Equal(1, list.GetStats().CacheEntries);
        var c = Match(list, "foo");
        Assert.Same(a, b);
        Assert.Same(b, c);
        Assert.Equal(1, list.GetStats().CacheHits);
    }

    [Fact]
    public void OneShotSubjects_UnderOneWildcard_ShareOneResult_AndStayOutOfTheCache()
    {
        var list = new SubList();
        var inbox = Sub("_INBOX.abc.*");
        list.Insert(inbox);
        var first = Match(list, "_INBOX.abc.1");
        for (var i = 2; i < 100; i++)
        {
            Assert.Same(first, Match(list, $"_INBOX.abc.{i}"));
        }
        Assert.Same(inbox, Assert.Single(first.Plain));
        Assert.Equal(0, list.GetStats().CacheEntries);
    }

    [Fact]
    public void SharedNodeResult_IsRebuilt_WhenTheNodeChanges()
    {
        var list = new SubList();
        var one = Sub("_INBOX.abc.*", sid: "1");
        var two = Sub("_INBOX.abc.*", sid: "2");
        var member = Sub("_INBOX.abc.*", queue: "q", sid: "3");
        list.Insert(one);
        var before = Match(list, "_INBOX.abc.1");
        Assert.Single(before.Plain);

        list.Insert(two);
        list.Insert(member);
        var after = Match(list, "_INBOX.abc.2");
        Assert.NotSame(before, after);
        Assert.Equal(2, after.Plain.Length);
        Assert.Same(member, Assert.Single(Assert.Single(after.QueueGroups)));

        list.Remove(one);
        list.Remove(member);
        var removed = Match(list, "_INBOX.abc.3");
        Assert.Same(two, Assert.Single(removed.Plain));
        Assert.Empty(removed.QueueGroups);
    }

    [Fact]
    public void MatchAcrossTwoNodes_MergesBoth_AndMergesQueueGroups()
    {
        var list = new SubList();
        var wildcard = Sub("_INBOX.*.*", queue: "q", sid: "1");
        var full = Sub("_INBOX.>", queue: "q", sid: "2");
        var plain = Sub("_INBOX.abc.*", sid: "3");
        list.Insert(wildcard);
        list.Insert(full);
        list.Insert(plain);
        var result = Match(list, "_INBOX.abc.7");
        Assert.Same(plain, Assert.Single(result.Plain));
        Assert.Equal(2, Assert.Single(result.QueueGroups).Length);
    }

    [Fact]
    public void GenerationId_ChangesOnEveryInsertAndRemove()
    {
        var list = new SubList();
        var g0 = list.GenerationId;
        var sub = Sub("foo");
        list.Insert(sub);
        var g1 = list.GenerationId;
        list.Remove(sub);
        Assert.True(g1 > g0);
        Assert.True(list.GenerationId > g1);
    }

    [Fact]
    public void RemovingEverything_PrunesTheTrie()
    {
        var list = new SubList();
        var subs = Enumerable.Range(0, 1000).Select(i => Sub($"_INBOX.{i}.x", sid: i.ToString())).ToList();
        foreach (var s in subs)
        {
            list.Insert(s);
        }
        list.RemoveBatch(subs);
        Assert.Equal(0, list.Count);
        Assert.Empty(list.All());
        Assert.True(subs.All(s => s.Closed));
        Assert.False(list.Remove(subs[0]));
    }

    [Fact]
    public async Task ConcurrentInsertRemoveAndMatch_KeepCountsConsistent()
    {
        var list = new SubList();
        var stable = Sub("stable.subject", sid: "s");
        list.Insert(stable);
        var writers = Enumerable.Range(0, 2).Select(w => Task.Run(() =>
        {
            for (var i = 0; i < 2000; i++)
            {
                var s = Sub($"churn.{w}.{i}", sid: $"{w}-{i}");
                list.Insert(s);
                list.Remove(s);
            }
        })).ToArray();
        var reader = Task.Run(() =>
        {
            for (var i = 0; i < 5000; i++)
            {
                Assert.Single(Match(list, "stable.subject").Plain);
            }
        });
        await Task.WhenAll([.. writers, reader]);
        Assert.Equal(1, list.Count);
    }
}
