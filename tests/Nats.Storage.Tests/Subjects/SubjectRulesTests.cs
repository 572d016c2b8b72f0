using System.Text;
using Nats.Subjects;

namespace Nats.Storage.Tests.Subjects;

/// <summary>
/// The subject kernel against the cases of Go's server/sublist_test.go (v2.9.10), each checked in both the
/// byte and the char form, which must agree.
/// </summary>
public sealed class SubjectRulesTests
{
    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    // TestSublistValidLiteralSubjects
    [Theory]
    [InlineData("foo", true)]
    [InlineData(".foo", false)]
    [InlineData("foo.", false)]
    [InlineData("foo..bar", false)]
    [InlineData("foo.bar.*", false)]
    [InlineData("foo.bar.>", false)]
    [InlineData("*", false)]
    [InlineData(">", false)]
    [InlineData("", false)]
    [InlineData("foo*", true)]
    [InlineData("foo**", true)]
    [InlineData("foo.**", true)]
    [InlineData("foo*bar", true)]
    [InlineData("foo.*bar", true)]
    [InlineData("foo*.bar", true)]
    [InlineData("*bar", true)]
    [InlineData("foo>", true)]
    [InlineData("foo>>", true)]
    [InlineData("foo.>>", true)]
    [InlineData("foo>bar", true)]
    [InlineData("foo.>bar", true)]
    [InlineData("foo>.bar", true)]
    [InlineData(">bar", true)]
    public void IsValidLiteral(string subject, bool expected)
    {
        Assert.Equal(expected, SubjectRules.IsValidLiteral(subject));
        Assert.Equal(expected, SubjectRules.IsValidLiteral(B(subject)));
    }

    // TestSublistValidSubjects, plus the whitespace rule and TestSublistInvalidSubjectsInsert.
    [Theory]
    [InlineData(".", false)]
    [InlineData("", false)]
    [InlineData(".foo", false)]
    [InlineData("foo.", false)]
    [InlineData("foo..bar", false)]
    [InlineData("foo.bar..baz", false)]
    [InlineData(">.bar", false)]
    [InlineData("foo.>.bar", false)]
    [InlineData("foo", true)]
    [InlineData("foo.bar.*", true)]
    [InlineData("foo.bar.>", true)]
    [InlineData("*", true)]
    [InlineData(">", true)]
    [InlineData("foo*", true)]
    [InlineData("foo**", true)]
    [InlineData("foo.**", true)]
    [InlineData("foo*bar", true)]
    [InlineData("foo.*bar", true)]
    [InlineData("foo*.bar", true)]
    [InlineData("*bar", true)]
    [InlineData("foo>", true)]
    [InlineData("foo.>>", true)]
    [InlineData("foo>bar", true)]
    [InlineData("foo.>bar", true)]
    [InlineData("foo>.bar", true)]
    [InlineData(">bar", true)]
    [InlineData("foo bar", false)]
    [InlineData("foo.\t", false)]
    [InlineData("foo.b\fr", false)]
    [InlineData("a\r.b", false)]
    [InlineData("a.\n", false)]
    public void IsValid(string subject, bool expected)
    {
        Assert.Equal(expected, SubjectRules.IsValid(subject));
        Assert.Equal(expected, SubjectRules.IsValid(B(subject)));
        Assert.Equal(expected && SubjectRules.IsLiteral(subject), SubjectRules.IsValidPublish(subject));
        Assert.Equal(expected && SubjectRules.IsLiteral(subject), SubjectRules.IsValidPublish(B(subject)));
    }

    // TestSubjectIsLiteral
    [Theory]
    [InlineData("foo", true)]
    [InlineData("foo.bar", true)]
    [InlineData("foo*.bar", true)]
    [InlineData("foo.b>", true)]
    [InlineData("*", false)]
    [InlineData(">", false)]
    [InlineData("foo.*", false)]
    [InlineData("foo.>", false)]
    [InlineData("foo.*.>", false)]
    [InlineData("foo.*.bar", false)]
    [InlineData("foo.bar.>", false)]
    public void IsLiteral(string subject, bool expected)
    {
        Assert.Equal(expected, SubjectRules.IsLiteral(subject));
        Assert.Equal(expected, SubjectRules.IsLiteral(B(subject)));
        Assert.Equal(!expected, SubjectRules.HasWildcard(subject));
        Assert.Equal(!expected, SubjectRules.HasWildcard(B(subject)));
    }

    // TestSublistMatchLiterals (matchLiteral), TestSublistMatchWithEmptyTokens and the trie's literal tokens.
    [Theory]
    [InlineData("foo", "foo", true)]
    [InlineData("foo", "bar", false)]
    [InlineData("foo", "*", true)]
    [InlineData("foo", ">", true)]
    [InlineData("foo.bar", ">", true)]
    [InlineData("foo.bar", "foo.>", true)]
    [InlineData("foo.bar", "bar.>", false)]
    [InlineData("stats.test.22", "stats.>", true)]
    [InlineData("stats.test.22", "stats.*.*", true)]
    [InlineData("foo.bar", "foo", false)]
    [InlineData("stats.test.foos", "stats.test.foos", true)]
    [InlineData("stats.test.foos", "stats.test.foo", false)]
    [InlineData("stats.test", "stats.test.*", false)]
    [InlineData("stats.test.foos", "stats.*", false)]
    [InlineData("stats.test.foos", "stats.*.*.foos", false)]
    [InlineData("*bar", "*bar", true)]
    [InlineData("foo*", "foo*", true)]
    [InlineData("foo*bar", "foo*bar", true)]
    [InlineData("foo.***.bar", "foo.***.bar", true)]
    [InlineData(">bar", ">bar", true)]
    [InlineData("foo>", "foo>", true)]
    [InlineData("foo>bar", "foo>bar", true)]
    [InlineData("foo.>>>.bar", "foo.>>>.bar", true)]
    [InlineData("foo.x", "foo.*x", false)]
    [InlineData("foo", "foo.>", false)]
    [InlineData("foo.bar", "*.*.*", false)]
    [InlineData("foo.*", "foo.*", true)]
    [InlineData("foo.*", "foo.bar", false)]
    [InlineData("foo.>", "foo.*", true)]
    [InlineData(".foo", ">", false)]
    [InlineData("..foo", ">", false)]
    [InlineData("foo..", ">", false)]
    [InlineData("foo.", ">", false)]
    [InlineData("foo.", "foo.*", false)]
    [InlineData("foo..bar", "foo.>", false)]
    [InlineData("foo...bar", ">", false)]
    [InlineData("", ">", false)]
    [InlineData("", "", false)]
    public void Matches(string subject, string pattern, bool expected)
    {
        Assert.Equal(expected, SubjectRules.Matches(subject, pattern));
        Assert.Equal(expected, SubjectRules.Matches(B(subject), B(pattern)));
    }

    // TestIsSubsetMatch, and the quirks of isSubsetMatchTokenized that callers rely on.
    [Theory]
    [InlineData("foo.*", ">", true)]
    [InlineData("foo.*", "*.*", true)]
    [InlineData("foo.*", "foo.*", true)]
    [InlineData("foo.*", "foo.bar", false)]
    [InlineData("foo.>", ">", true)]
    [InlineData("foo.>", "*.>", true)]
    [InlineData("foo.>", "foo.>", true)]
    [InlineData("foo.>", "foo.bar", false)]
    [InlineData("foo..bar", "foo.*", false)]
    [InlineData("foo.*", "foo..bar", false)]
    [InlineData("foo.bar", ">", true)]
    [InlineData("foo.bar", "foo.*", true)]
    [InlineData("foo.>", "foo.*", false)]
    [InlineData("foo", "foo.*", false)]
    [InlineData("foo.bar.baz", "foo.*", false)]
    [InlineData("foo.bar", "foo.*x", true)]
    [InlineData("foo", ">", true)]
    [InlineData("", ">", true)]
    [InlineData("foo", "", false)]
    public void IsSubsetMatch(string subject, string test, bool expected)
    {
        Assert.Equal(expected, SubjectRules.IsSubsetMatch(subject, test));
        Assert.Equal(expected, SubjectRules.IsSubsetMatch(B(subject), B(test)));
    }

    // TestSublistSubjectCollide, and the two shapes the import/export and JetStream checks relied on.
    [Theory]
    [InlineData("foo.*", "foo.*.bar.>", false)]
    [InlineData("foo.*.bar.>", "foo.*", false)]
    [InlineData("foo.*", "foo.foo", true)]
    [InlineData("foo.*", "*.foo", true)]
    [InlineData("foo.bar.>", "*.bar.foo", true)]
    [InlineData("foo.bar", "foo.bar", true)]
    [InlineData("foo.bar", "foo.baz", false)]
    [InlineData("foo.>", "foo", false)]
    [InlineData("foo.>", "*.bar.>", true)]
    [InlineData(">", "a.b.c", true)]
    [InlineData("a.*", "a.b.c", false)]
    [InlineData("a.*.c", "a.b.*", true)]
    [InlineData("a.*.c", "a.b.d", false)]
    public void Collide(string a, string b, bool expected)
    {
        Assert.Equal(expected, SubjectRules.Collide(a, b));
        Assert.Equal(expected, SubjectRules.Collide(B(a), B(b)));
        Assert.Equal(expected, SubjectRules.Collide(b, a));
    }

    // TestSubjectToken (tokenAt) and numTokens.
    [Theory]
    [InlineData("foo.bar.baz.*", 0, "")]
    [InlineData("foo.bar.baz.*", 1, "foo")]
    [InlineData("foo.bar.baz.*", 2, "bar")]
    [InlineData("foo.bar.baz.*", 3, "baz")]
    [InlineData("foo.bar.baz.*", 4, "*")]
    [InlineData("foo.bar.baz.*", 5, "")]
    public void TokenAt(string subject, int index, string expected)
    {
        Assert.Equal(expected, SubjectTokens.TokenAt(subject, index));
        Assert.Equal(expected, Encoding.UTF8.GetString(SubjectTokens.TokenAt(B(subject), index)));
    }

    [Theory]
    [InlineData("", 0)]
    [InlineData("foo", 1)]
    [InlineData("foo.", 2)]
    [InlineData("a.b.c", 3)]
    [InlineData("..", 3)]
    public void Count(string subject, int expected)
    {
        Assert.Equal(expected, SubjectTokens.Count(subject));
        Assert.Equal(expected, SubjectTokens.Count(B(subject)));
        Assert.Equal(Math.Max(1, expected), SubjectTokens.Split(subject).Length);
    }

    [Fact]
    public void TokenizeKeepsEmptyTokensUnlessTheMatchRuleRefusesThem()
    {
        Span<Range> tokens = stackalloc Range[4];
        var subject = B("a..b");
        Assert.Equal(3, SubjectTokens.Tokenize(subject, tokens));
        Assert.Equal(0, subject.AsSpan()[tokens[1]].Length);
        Assert.Equal(-1, SubjectTokens.TokenizeNonEmpty(subject, tokens));
        Assert.Equal(-1, SubjectTokens.TokenizeNonEmpty(B(""), tokens));
        Assert.Equal(-1, SubjectTokens.Tokenize(B("a.b.c.d.e"), tokens));
        Assert.Equal(2, SubjectTokens.TokenizeNonEmpty(B("a.b"), tokens));
        Assert.Equal(["a", "b", "c"], SubjectTokens.Tokenize(B("a.b.c")).Select(r => Encoding.UTF8.GetString(B("a.b.c").AsSpan()[r])));
    }

    [Fact]
    public void InfoCountsWildcardsAndRefusesWhatGoRefuses()
    {
        Assert.True(SubjectRules.Info("a.*.*.>", out var tokens, out var singles, out var full));
        Assert.Equal(4, tokens.Length);
        Assert.Equal(2, singles);
        Assert.True(full);
        Assert.False(SubjectRules.Info("a.>.b", out _, out _, out _));
        Assert.False(SubjectRules.Info("", out _, out _, out _));
        Assert.False(SubjectRules.Info("a..b", out _, out _, out _));
    }

    [Theory]
    [InlineData("", true)]
    [InlineData(">", true)]
    [InlineData("*", false)]
    [InlineData("foo.>", false)]
    public void IsMatchAll(string filter, bool expected) => Assert.Equal(expected, SubjectRules.IsMatchAll(filter));

    [Fact]
    public void TokenClassesAreExactTokensOnly()
    {
        Assert.True(SubjectTokens.IsSingleWildcard("*"));
        Assert.False(SubjectTokens.IsSingleWildcard("**"));
        Assert.True(SubjectTokens.IsFullWildcard(">"u8));
        Assert.False(SubjectTokens.IsFullWildcard(">>"u8));
        Assert.True(SubjectTokens.IsWildcard("*"u8));
        Assert.False(SubjectTokens.IsWildcard(""));
        Assert.Equal(">", SubjectTokens.Last("a.b.>").ToString());
        Assert.Equal("", SubjectTokens.Last("a.").ToString());
        Assert.True(SubjectTokens.ContainsWhitespace("a b"));
        Assert.False(SubjectTokens.ContainsWhitespace("ab"));
    }
}
