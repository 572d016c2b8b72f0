using Nats.Server.Mappings;

namespace Nats.Server.Tests.Mappings;

/// <summary>Transforms as Go 2.9.10 compiles and applies them (cases from Go's TestSubjectTransforms and its code paths).</summary>
public class SubjectTransformTests
{
    [Theory]
    [InlineData("foo", "bar", "foo", "bar")]
    [InlineData("foo.*.bar.*.baz", "req.$2.$1", "foo.A.bar.B.baz", "req.B.A")]
    [InlineData("baz.>", "my.pre.>", "baz.1.2.3", "my.pre.1.2.3")]
    [InlineData("baz.>", "foo.bar.>", "baz.1.2.3", "foo.bar.1.2.3")]
    [InlineData(">", ">", "a.b.c", "a.b.c")]
    [InlineData("*", "foo.bar.$1", "foo", "foo.bar.foo")]
    [InlineData("a.*.*", "b.$2.$1", "a.x.y", "b.y.x")]
    [InlineData("a.*.*", "b.{{wildcard(2)}}.{{ Wildcard( 1 ) }}", "a.x.y", "b.y.x")]
    [InlineData("a.*.>", "b.$1.>", "a.x.y.z", "b.x.y.z")]
    [InlineData("a.*", "b.$1.$1", "a.x", "b.x.x")]
    [InlineData("a.*", "b.$0.$1", "a.x", "b.a.x")] // Go reads an unknown ordinal as source token 0
    [InlineData("a.*", "$x.$1", "a.q", "$x.q")] // "$x" is not a number: literal
    [InlineData("*", "{{splitfromleft(1,3)}}", "12345", "123.45")]
    [InlineData("*", "{{SplitFromRight(1,3)}}", "12345", "12.345")]
    [InlineData("*", "{{splitFromLeft(1,5)}}", "12345", "12345")]
    [InlineData("*", "{{splitFromLeft(1,0)}}", "12345", "12345")]
    [InlineData("*", "{{splitFromRight(1,-1)}}", "12345", "12345")]
    [InlineData("*", "{{SliceFromLeft(1,3)}}", "1234567890", "123.456.789.0")]
    [InlineData("*", "{{SliceFromLeft(1,3)}}", "123456", "123.456")]
    [InlineData("*", "{{SliceFromRight(1,3)}}", "1234567890", "1.234.567.890")]
    [InlineData("*", "{{SliceFromRight(1,3)}}", "123456", "123.456")]
    [InlineData("*", "{{sliceFromRight(1,10)}}", "123", "123")]
    [InlineData("*", "{{split(1,-)}}", "-abc-def--ghi-", "abc.def.ghi")]
    [InlineData("*", "{{split(1,-)}}", "abc-def--ghi-", "abc.def.ghi")]
    [InlineData("*", "{{split(1,-)}}", "--a", ".a")] // Go writes no separator only after an empty *first* piece
    [InlineData("*", "{{split(1,-)}}", "abc", "abc")]
    [InlineData("*", "{{split(1,ab)}}", "xabyabz", "x.y.z")]
    [InlineData("*.*", "{{split(2,-)}}.{{splitfromleft(1,2)}}", "foo.-abc-def--ghij-", "abc.def.ghij.fo.o")]
    [InlineData("*", "{{split(1, )}}", "abc", "a.b.c")] // an empty delimiter splits into characters
    [InlineData("*", "{{split(1, )}}", "aé", "a.é")]
    [InlineData("a.*", "b.{{unknown(1)}}", "a.x", "b.{{unknown(1)}}")] // never reached: Parse rejects it (see below)
    public void Applies(string source, string destination, string subject, string expected)
    {
        if (destination.Contains("unknown"))
        {
            Assert.Throws<MappingException>(() => SubjectTransform.Create(source, destination));
            return;
        }
        var transform = SubjectTransform.Create(source, destination);
        Assert.Equal(expected, transform.Apply(subject));
    }

    [Fact]
    public void LiteralSourceMapsToTheDestinationVerbatim()
    {
        // Go only reads placeholders when the source has wildcards.
        var transform = SubjectTransform.Create("foo", "bar.$1.{{wildcard(1)}}");
        Assert.True(transform.IsLiteral);
        Assert.Equal("bar.$1.{{wildcard(1)}}", transform.Apply("foo"));
    }

    [Theory]
    [InlineData(3)]
    [InlineData(1)]
    [InlineData(1000)]
    public void PartitionIsFnv1aOfTheSelectedTokensModuloTheCount(int count)
    {
        // Go hashes the selected tokens concatenated without separators.
        var transform = SubjectTransform.Create("*.*.*", $"p.{{{{partition({count},1,3)}}}}.$2.$3");
        var expected = Fnv1a("a" + "c") % (uint)count;
        Assert.Equal($"p.{expected}.b.c", transform.Apply("a.b.c"));
    }

    [Fact]
    public void PartitionSpreadsKeysAndIsStable()
    {
        var transform = SubjectTransform.Create("orders.*", "orders.{{partition(4,1)}}.$1");
        var seen = new HashSet<string>();
        for (var i = 0; i < 200; i++)
        {
            var mapped = transform.Apply($"orders.customer{i}");
            Assert.Equal(mapped, transform.Apply($"orders.customer{i}"));
            var partition = mapped.Split('.')[1];
            Assert.Contains(partition, new[] { "0", "1", "2", "3" });
            seen.Add(partition);
        }
        Assert.Equal(4, seen.Count);
        Assert.Equal($"orders.{Fnv1a("customer7") % 4}.customer7", transform.Apply("orders.customer7"));
    }

    [Fact]
    public void NegativePartitionCountWrapsAsInGo()
    {
        var transform = SubjectTransform.Create("*", "{{partition(-1,1)}}");
        Assert.Equal((Fnv1a("k") % uint.MaxValue).ToString(System.Globalization.CultureInfo.InvariantCulture), transform.Apply("k"));
    }

    [Theory]
    [InlineData("foo", "", "invalid subject")]
    [InlineData("foo..", "bar", "invalid subject")]
    [InlineData("foo.*", "bar.*", "invalid subject")]
    [InlineData("foo.*", "bar.$1.>", "invalid subject")]
    [InlineData("foo.>", "bar.baz", "invalid subject")]
    [InlineData("foo.*.*", "bar.$2", "invalid mapping destination: not using all of the token wildcard(s) in bar.$2")]
    [InlineData("foo.*", "bar.$2", "invalid mapping destination: wildcard index out of range in $2: [2]")]
    [InlineData("foo.*", "foo.$foo", "invalid mapping destination: not using all of the token wildcard(s) in foo.$foo")]
    [InlineData("foo.*", "foo.{{wildcard(2)}}", "invalid mapping destination: wildcard index out of range in {{wildcard(2)}}: [2]")]
    [InlineData("foo.*", "foo.{{partition(2,1,3)}}", "invalid mapping destination: wildcard index out of range in {{partition(2,1,3)}}: [3]")]
    [InlineData("foo.*", "foo.{{unimplemented(1)}}", "invalid mapping destination: unknown function in {{unimplemented(1)}}")]
    [InlineData("foo.*", "foo.{{partition(10)}}", "invalid mapping destination: not enough arguments passed to the function in {{partition(10)}}")]
    [InlineData("foo.*", "foo.{{partition(x,1)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{partition(x,1)}}")]
    [InlineData("foo.*", "foo.{{wildcard(foo)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{wildcard(foo)}}")]
    [InlineData("foo.*", "foo.{{wildcard()}}", "invalid mapping destination: not enough arguments passed to the function in {{wildcard()}}")]
    [InlineData("foo.*", "foo.{{wildcard(1,2)}}", "invalid mapping destination: too many arguments passed to the function in {{wildcard(1,2)}}")]
    [InlineData("foo.*", "foo.{{ wildcard5) }}", "invalid mapping destination: unknown function in {{ wildcard5) }}")]
    [InlineData("foo.*", "foo.{{splitLeft(2,2}}", "invalid mapping destination: unknown function in {{splitLeft(2,2}}")]
    [InlineData("foo.*", "foo.{{splitFromLeft(1)}}", "invalid mapping destination: not enough arguments passed to the function in {{splitFromLeft(1)}}")]
    [InlineData("foo.*", "foo.{{sliceFromRight(1,2,3)}}", "invalid mapping destination: too many arguments passed to the function in {{sliceFromRight(1,2,3)}}")]
    [InlineData("foo.*", "foo.{{sliceFromLeft(1,z)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{sliceFromLeft(1,z)}}")]
    [InlineData("foo.*", "foo.{{split(1,a b)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,a b)}}")]
    [InlineData("foo.*", "foo.{{split(1)}}", "invalid mapping destination: not enough arguments passed to the function in {{split(1)}}")]
    [InlineData("foo.*", "foo.{{split(1,-,x)}}", "invalid mapping destination: too many arguments passed to the function in {{split(1,-,x)}}")]
    [InlineData("foo.>", "bar.$1.>", "invalid mapping destination: wildcard index out of range in $1: [1]")]
    public void RejectsWithGoErrors(string source, string destination, string error)
    {
        var e = Assert.Throws<MappingException>(() => SubjectTransform.Create(source, destination));
        Assert.Equal(error, e.Message);
    }

    [Theory]
    [InlineData("", "invalid mapping destination: invalid subject in ")]
    [InlineData("a..b", "invalid mapping destination: invalid subject in ")]
    [InlineData("a.>.b", "invalid mapping destination: invalid subject in b")]
    [InlineData("a.{{nope(1)}}", "invalid mapping destination: unknown function in {{nope(1)}}")]
    [InlineData("a.b c", "invalid mapping destination: invalid subject")]
    [InlineData("a.{{SPLIT(1,-)}}", "invalid mapping destination: unknown function in {{SPLIT(1,-)}}")] // Go only folds the first letter
    public void DestinationValidationUsesGoErrors(string destination, string error)
    {
        var e = Assert.Throws<MappingException>(() => DestinationToken.Validate(destination));
        Assert.Equal(error, e.Message);
    }

    [Theory]
    [InlineData("a.{{ wildcard(1) }}")]
    [InlineData("a.{{partition(3,1)}}.>")]
    [InlineData("a.$1.{{Split(1,-)}}")]
    public void DestinationValidationAccepts(string destination) => DestinationToken.Validate(destination);

    [Theory]
    [InlineData("12", true, 12)]
    [InlineData("+12", true, 12)]
    [InlineData("-3", true, -3)]
    [InlineData("9223372036854775807", true, long.MaxValue)]
    [InlineData("-9223372036854775808", true, long.MinValue)]
    [InlineData("9223372036854775808", false, 0)]
    [InlineData("", false, 0)]
    [InlineData("-", false, 0)]
    [InlineData("1_000", false, 0)]
    [InlineData(" 1", false, 0)]
    public void AtoiFollowsGo(string text, bool ok, long value)
    {
        Assert.Equal(ok, DestinationToken.GoAtoi(text, out var parsed));
        Assert.Equal(value, parsed);
    }

    [Fact]
    public void ApplyGrowsTheBufferAndReusesIt()
    {
        var transform = SubjectTransform.Create("a.*.>", "{{sliceFromLeft(1,1)}}.$1.>");
        var subject = "a.abcdefghijklmnopqrstuvwxyz.x.y"u8.ToArray();
        var tokens = Nats.Subjects.SubjectTokens.Tokenize(subject);
        var buffer = Array.Empty<byte>();
        var length = transform.Apply(subject, tokens, ref buffer);
        Assert.Equal("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.abcdefghijklmnopqrstuvwxyz.x.y",
            System.Text.Encoding.UTF8.GetString(buffer, 0, length));
        var first = buffer;
        transform.Apply(subject, tokens, ref buffer);
        Assert.Same(first, buffer);
    }

    internal static uint Fnv1a(string text)
    {
        var hash = 2166136261u;
        foreach (var b in System.Text.Encoding.UTF8.GetBytes(text))
        {
            hash = (hash ^ b) * 16777619u;
        }
        return hash;
    }
}
