using Nats.Storage.Subjects;

namespace Nats.Storage.Tests;

public sealed class SubjectTests
{
    [Theory]
    [InlineData("foo.bar", "foo.bar", true)]
    [InlineData("foo.bar", "foo.*", true)]
    [InlineData("foo.bar", "*.bar", true)]
    [InlineData("foo.bar", "*", false)]
    [InlineData("foo.bar", ">", true)]
    [InlineData("foo.bar", "foo.>", true)]
    [InlineData("foo", "foo.>", false)]
    [InlineData("foo.bar.baz", "foo.*", false)]
    [InlineData("foo.bar.baz", "foo.*.baz", true)]
    [InlineData("foo.bar.baz", "foo.*.>", true)]
    [InlineData("foo.ba", "foo.bar", false)]
    [InlineData("foo.barx", "foo.bar", false)]
    [InlineData("foo*.bar", "foo*.*", true)]
    public void Matches(string subject, string filter, bool expected) => Assert.Equal(expected, SubjectMatch.Matches(subject, filter));

    [Theory]
    [InlineData("foo.*", true)]
    [InlineData("foo.>", true)]
    [InlineData(">", true)]
    [InlineData("foo*.bar", false)]
    [InlineData("foo.b>", false)]
    [InlineData("foo.bar", false)]
    public void DetectsWildcards(string subject, bool expected) => Assert.Equal(expected, SubjectMatch.HasWildcard(subject));

    [Fact]
    public void IndexMatchVisitsOnlyMatchingSubjectsAndStopsEarly()
    {
        var index = new SubjectIndex();
        foreach (var s in new[] { "a.b", "a.c", "a.b.c", "x.b", "a" })
        {
            index.GetOrAdd(s);
        }

        var all = new Collect(int.MaxValue);
        index.Match("a.*", SubjectMatch.Tokenize("a.*"), ref all);
        Assert.Equal(["a.b", "a.c"], all.Seen.Order());
        var tail = new Collect(int.MaxValue);
        index.Match("a.>", SubjectMatch.Tokenize("a.>"), ref tail);
        Assert.Equal(["a.b", "a.b.c", "a.c"], tail.Seen.Order());
        var one = new Collect(1);
        Assert.False(index.Match(">", null, ref one));
        Assert.Single(one.Seen);

        index.Remove(index.Find("a.b.c")!);
        var after = new Collect(int.MaxValue);
        index.Match("*.b.*", SubjectMatch.Tokenize("*.b.*"), ref after);
        Assert.Empty(after.Seen);
        Assert.Equal(4, index.Count);
        Assert.Same(index.Find("x.b"), index.GetOrAdd("x.b"u8));
    }

    private struct Collect(int limit) : ISubjectVisitor
    {
        public List<string> Seen = [];

        public bool Visit(SubjectInfo info)
        {
            Seen.Add(info.Subject);
            return Seen.Count < limit;
        }
    }
}
