using System.Text;
using Nats.Server.Mappings;

namespace Nats.Server.Tests.Mappings;

/// <summary>Mapping selection and weights as Go's AddWeightedMappings / selectMappedSubject.</summary>
public class SubjectMapperTests
{
    [Fact]
    public void NoMappingsGiveNoMapper()
    {
        Assert.Null(SubjectMapper.Create([]));
        Assert.Null(SubjectMapper.Create(null));
    }

    [Fact]
    public void UnmatchedSubjectIsLeftAlone()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("foo", "bar"), new SubjectMapping("a.*", "b.$1")])!;
        var buffer = Array.Empty<byte>();
        Assert.False(mapper.TryMap("foo.x"u8, ref buffer, out _));
        Assert.False(mapper.TryMap("a"u8, ref buffer, out _));
        Assert.False(mapper.TryMap("a.b.c"u8, ref buffer, out _));
        Assert.Empty(buffer);
    }

    [Theory]
    [InlineData("foo", "bar")]
    [InlineData("a.x", "b.x")]
    [InlineData("w.1.2", "v.2.1")]
    [InlineData("t.q.r.s", "u.q.r.s")]
    public void MapsMatchingSubjects(string subject, string expected)
    {
        var mapper = SubjectMapper.Create([
            new SubjectMapping("foo", "bar"),
            new SubjectMapping("a.*", "b.$1"),
            new SubjectMapping("w.*.*", "v.$2.$1"),
            new SubjectMapping("t.>", "u.>"),
        ])!;
        Assert.Equal(expected, Map(mapper, subject));
    }

    [Fact]
    public void FirstMatchingMappingWinsAndASameSourceReplaces()
    {
        var mapper = SubjectMapper.Create([
            new SubjectMapping("a.*", "first.$1"),
            new SubjectMapping("a.b", "second"),
            new SubjectMapping("a.*", "replaced.$1"),
        ])!;
        Assert.Equal(2, mapper.Entries.Count);
        Assert.Equal("replaced.b", Map(mapper, "a.b"));
    }

    [Fact]
    public void PublishedWildcardTokensOnlyMatchWildcards()
    {
        // A non-pedantic client may publish "a.*"; Go's subset match lets it match only a '*' in the source.
        var mapper = SubjectMapper.Create([new SubjectMapping("a.b", "lit"), new SubjectMapping("a.*", "wc.$1")])!;
        Assert.Equal("wc.*", Map(mapper, "a.*"));
        var buffer = Array.Empty<byte>();
        Assert.False(mapper.TryMap("a.>"u8, ref buffer, out _));
    }

    [Fact]
    public void LiteralSourceWithStarPrefixedTokenMatchesLikeAWildcardAsInGo()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("a.*x", "hit")])!;
        Assert.Equal("hit", Map(mapper, "a.anything"));
    }

    [Fact]
    public void SubjectsWithManyTokensAreMapped()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("a.>", "b.>")])!;
        var subject = "a." + string.Join('.', Enumerable.Range(0, 50));
        Assert.Equal("b." + string.Join('.', Enumerable.Range(0, 50)), Map(mapper, subject));
    }

    [Fact]
    public void WeightsBelow100LeaveTheRestOnTheOriginalSubject()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("p.*", [new MappingDestination("q.$1", 30)])])!;
        var entry = Assert.Single(mapper.Entries);
        Assert.Equal(new[] { ("q.$1", 30), ("p.$1", 100) }, entry.Destinations.Select(d => (d.Transform.Destination, d.CumulativeWeight)));
    }

    [Fact]
    public void DestinationsAreSortedByWeightWithCumulativeWeights()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("w.>", [new MappingDestination("y.>", 60), new MappingDestination("x.>", 40)])])!;
        Assert.Equal(new[] { ("x.>", 40), ("y.>", 100) },
            mapper.Entries[0].Destinations.Select(d => (d.Transform.Destination, d.CumulativeWeight)));
    }

    [Fact]
    public void WeightedSelectionFollowsTheWeights()
    {
        // Seeded, so the counts are the same every run; the bounds are 5 standard deviations wide.
        var mapper = SubjectMapper.Create(
            [new SubjectMapping("foo", [new MappingDestination("a", 20), new MappingDestination("b", 30), new MappingDestination("c", 50)])],
            new Random(42))!;
        var counts = Count(mapper, "foo", 10_000);
        AssertNear(counts, "a", 10_000, 0.2);
        AssertNear(counts, "b", 10_000, 0.3);
        AssertNear(counts, "c", 10_000, 0.5);
        Assert.Equal(3, counts.Count);
    }

    [Fact]
    public void PartialWeightsSendTheRemainderToTheSource()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("foo.*", [new MappingDestination("bar.$1", 40)])], new Random(7))!;
        var counts = Count(mapper, "foo.k", 10_000);
        AssertNear(counts, "bar.k", 10_000, 0.4);
        AssertNear(counts, "foo.k", 10_000, 0.6);
    }

    [Fact]
    public void ListingTheSourceItselfMakesTheRemainderALoss()
    {
        // Go's loss injection: foo at 80% (foo listed) drops about 20%; bar at 0% drops everything.
        var mapper = SubjectMapper.Create(
            [new SubjectMapping("foo", [new MappingDestination("foo", 80)]), new SubjectMapping("bar", [new MappingDestination("bar", 0)])],
            new Random(3))!;
        var counts = Count(mapper, "foo", 10_000);
        AssertNear(counts, "foo", 10_000, 0.8);
        AssertNear(counts, "", 10_000, 0.2);
        Assert.Equal(10_000, Count(mapper, "bar", 10_000)[""]);
    }

    [Fact]
    public void ClusterScopedDestinationsAreKeptButNotUsedWithoutACluster()
    {
        var mapper = SubjectMapper.Create([new SubjectMapping("foo", [
            new MappingDestination("bar", 100),
            new MappingDestination("baz", 0, "east"),
        ])])!;
        var entry = mapper.Entries[0];
        Assert.Equal(new[] { ("foo", 100) }, entry.ClusterDestinations["east"].Skip(1).Select(d => (d.Transform.Destination, d.CumulativeWeight)));
        Assert.Equal("bar", Map(mapper, "foo"));
    }

    [Theory]
    [InlineData("foo..bar", "bar", "invalid subject")]
    [InlineData("foo", "bar,bar", "duplicate entry for \"bar\"")]
    [InlineData("foo", "bar:101", "individual weights need to be <= 100")]
    [InlineData("foo", "bar:60,baz:50", "total weight needs to be <= 100")]
    [InlineData("foo.*", "bar:60,baz.$1:40", "invalid mapping destination: not using all of the token wildcard(s) in bar")]
    [InlineData("foo", "a b:100", "invalid mapping destination: invalid subject")]
    public void RejectsInvalidMappingsWithGoErrors(string source, string destinations, string error)
    {
        var list = destinations.Split(',').Select(d => d.Split(':')).Select(p => new MappingDestination(p[0], p.Length > 1 ? int.Parse(p[1]) : 100)).ToList();
        var e = Assert.Throws<MappingException>(() => SubjectMapper.Create([new SubjectMapping(source, list)]));
        Assert.Equal(error, e.Message);
    }

    private static string Map(SubjectMapper mapper, string subject)
    {
        var buffer = Array.Empty<byte>();
        Assert.True(mapper.TryMap(Encoding.UTF8.GetBytes(subject), ref buffer, out var length));
        return Encoding.UTF8.GetString(buffer, 0, length);
    }

    private static Dictionary<string, int> Count(SubjectMapper mapper, string subject, int n)
    {
        var counts = new Dictionary<string, int>();
        for (var i = 0; i < n; i++)
        {
            var mapped = Map(mapper, subject);
            counts[mapped] = counts.GetValueOrDefault(mapped) + 1;
        }
        return counts;
    }

    private static void AssertNear(Dictionary<string, int> counts, string key, int n, double p)
    {
        var expected = n * p;
        var tolerance = 5 * Math.Sqrt(n * p * (1 - p));
        var actual = counts.GetValueOrDefault(key);
        Assert.True(Math.Abs(actual - expected) <= tolerance, $"{key}: {actual}, expected {expected} ± {tolerance:F0}");
    }
}

/// <summary>The publish path maps into a reused buffer: no allocation per message once warmed up.</summary>
public class SubjectMapperAllocationTests
{
    [Fact]
    public void MappingAndMissingAllocateNothing()
    {
        var mapper = SubjectMapper.Create([
            new SubjectMapping("orders.*", "orders.{{partition(8,1)}}.$1"),
            new SubjectMapping("a.*.*", "b.{{splitFromLeft(2,2)}}.{{sliceFromRight(1,2)}}.{{split(1,-)}}"),
            new SubjectMapping("w.>", [new MappingDestination("x.>", 50), new MappingDestination("y.>", 50)]),
            new SubjectMapping("lit", "other"),
        ])!;
        byte[][] subjects = ["orders.c42"u8.ToArray(), "a.x-y-z.abcdef"u8.ToArray(), "w.1.2.3"u8.ToArray(), "lit"u8.ToArray(), "no.match.here"u8.ToArray()];
        var buffer = Array.Empty<byte>();
        void Run()
        {
            foreach (var subject in subjects)
            {
                mapper.TryMap(subject, ref buffer, out _);
            }
        }
        for (var i = 0; i < 100; i++)
        {
            Run();
        }
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 1000; i++)
        {
            Run();
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
