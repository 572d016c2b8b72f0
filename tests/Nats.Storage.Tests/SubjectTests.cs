using Nats.Storage.Subjects;
using Nats.Subjects;

namespace Nats.Storage.Tests;

public sealed class SubjectTests
{
    [Fact]
    public void IndexMatchVisitsOnlyMatchingSubjectsAndStopsEarly()
    {
        var index = new SubjectIndex();
        foreach (var s in new[] { "a.b", "a.c", "a.b.c", "x.b", "a" })
        {
            index.GetOrAdd(s);
        }

        var all = new Collect(int.MaxValue);
        index.Match("a.*", SubjectTokens.Split("a.*"), ref all);
        Assert.Equal(["a.b", "a.c"], all.Seen.Order());
        var tail = new Collect(int.MaxValue);
        index.Match("a.>", SubjectTokens.Split("a.>"), ref tail);
        Assert.Equal(["a.b", "a.b.c", "a.c"], tail.Seen.Order());
        var one = new Collect(1);
        Assert.False(index.Match(">", null, ref one));
        Assert.Single(one.Seen);

        index.Remove(index.Find("a.b.c")!);
        var after = new Collect(int.MaxValue);
        index.Match("*.b.*", SubjectTokens.Split("*.b.*"), ref after);
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
