using Nats.Server.Auth;

namespace Nats.Server.Tests.Auth;

public sealed class SubjectPatternsTests
{
    [Theory]
    [InlineData("foo", "foo", true)]
    [InlineData("foo", "foo.bar", false)]
    [InlineData("foo.*", "foo.bar", true)]
    [InlineData("foo.*", "foo", false)]
    [InlineData("foo.*", "foo.bar.baz", false)]
    [InlineData("foo.>", "foo.bar.baz", true)]
    [InlineData("foo.>", "foo", false)]
    [InlineData(">", "anything.at.all", true)]
    [InlineData("*.b", "a.b", true)]
    // Wildcards in the tested subject are literal tokens: '*' in a pattern covers them, a literal does not.
    [InlineData("foo.*", "foo.>", true)]
    [InlineData("foo.bar", "foo.*", false)]
    [InlineData("foo.>", "foo.*", true)]
    // A subject with an empty token matches nothing.
    [InlineData(">", "foo..bar", false)]
    [InlineData(">", "foo.", false)]
    [InlineData(">", ".foo", false)]
    [InlineData(">", "", false)]
    [InlineData("foo.>", "foo.", false)]
    [InlineData("a.b.c", "a.b", false)]
    [InlineData("a.b", "a.b.c", false)]
    [InlineData("a.*.c", "a.xyz.c", true)]
    [InlineData("a.*.c", "a.xyz.cd", false)]
    [InlineData("café.*", "café.x", true)]
    public void Plain_matching(string pattern, string subject, bool expected)
    {
        var patterns = SubjectPatterns.Compile([pattern], allowQueues: false);
        Assert.Equal(expected, patterns.MatchesPlain(subject));
        Assert.Equal(expected, patterns.MatchesPlain(System.Text.Encoding.UTF8.GetBytes(subject)));
    }

    [Fact]
    public void Invalid_patterns_are_ignored()
    {
        var patterns = SubjectPatterns.Compile(["foo..bar", "a.>.b", "", "ok"], allowQueues: false);
        Assert.Equal(1, patterns.Count);
        Assert.True(patterns.MatchesPlain("ok"));
    }

    [Fact]
    public void Queue_entries_are_separate_from_plain_ones()
    {
        var patterns = SubjectPatterns.Compile(["foo q1", "foo  q2", "bar", "baz a b"], allowQueues: true);
        Assert.Equal(3, patterns.Count);
        patterns.Match("foo", out var plain, out var queues);
        Assert.False(plain);
        Assert.Equal(["q1", "q2"], queues);
        patterns.Match("bar", out plain, out queues);
        Assert.True(plain);
        Assert.Null(queues);
    }

    [Theory]
    [InlineData("v1", "v1", true)]
    [InlineData("v1.a", "v1.*", true)]
    [InlineData("v1.a.b", "v1.>", true)]
    [InlineData("v2", "v1.*", false)]
    [InlineData("v1.*", "v1.a", false)]
    public void Queue_names_match_literally_or_as_wildcard_subset(string queue, string entry, bool expected) =>
        Assert.Equal(expected, SubjectPatterns.QueueMatches(queue, [entry]));
}
