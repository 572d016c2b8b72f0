using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

public class ConfigParserSyntaxTests
{
    private static object Plain(string text, string key) => ConfigParser.Parse(text)[key].ToPlain();

    [Theory]
    [InlineData("foo: 42")]
    [InlineData("foo = 42")]
    [InlineData("foo 42")]
    [InlineData("foo:42")]
    [InlineData("foo=42;")]
    [InlineData("  foo  =   42  # trailing comment")]
    [InlineData("foo: 42 // slash comment")]
    [InlineData("\"foo\": 42")]
    [InlineData("'foo' = 42")]
    public void KeyValueSeparators(string text) => Assert.Equal(42L, Plain(text, "foo"));

    [Fact]
    public void CommentsAndBlankLinesAreIgnored()
    {
        var map = ConfigParser.Parse("# hash comment\n\n// slash comment\nport: 1 # after\n  # indented\nname: x\n");
        Assert.Equal(["port", "name"], map.Keys);
    }

    [Theory]
    [InlineData("true", true)]
    [InlineData("TRUE", true)]
    [InlineData("yes", true)]
    [InlineData("on", true)]
    [InlineData("false", false)]
    [InlineData("no", false)]
    [InlineData("Off", false)]
    public void Booleans(string word, bool expected) => Assert.Equal(expected, Plain($"b: {word}", "b"));

    [Fact]
    public void QuotedBooleanIsAString() => Assert.Equal("true", Plain("b: \"true\"", "b"));

    [Theory]
    [InlineData("1k", 1000L)]
    [InlineData("1K", 1000L)]
    [InlineData("1kb", 1024L)]
    [InlineData("1KB", 1024L)]
    [InlineData("1ki", 1024L)]
    [InlineData("1KiB", 1024L)]
    [InlineData("1m", 1_000_000L)]
    [InlineData("1MB", 1024L * 1024)]
    [InlineData("8mb", 8L * 1024 * 1024)]
    [InlineData("2g", 2_000_000_000L)]
    [InlineData("2GB", 2L * 1024 * 1024 * 1024)]
    [InlineData("1t", 1_000_000_000_000L)]
    [InlineData("1TB", 1L << 40)]
    [InlineData("1p", 1_000_000_000_000_000L)]
    [InlineData("1pb", 1L << 50)]
    [InlineData("1e", 1_000_000_000_000_000_000L)]
    [InlineData("1eb", 1L << 60)]
    [InlineData("-1", -1L)]
    [InlineData("-2k", -2000L)]
    [InlineData("0", 0L)]
    public void IntegersAndSizeSuffixes(string literal, long expected) => Assert.Equal(expected, Plain($"v: {literal}", "v"));

    [Fact]
    public void IntegerOutOfRangeIsAnError()
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("v: 99999999999999999999"));
        Assert.Contains("integer '99999999999999999999' is out of the range", e.Message);
    }

    [Fact]
    public void Floats()
    {
        Assert.Equal(1.5, Plain("v: 1.5", "v"));
        Assert.Equal(-0.25, Plain("v: -0.25", "v"));
    }

    [Theory]
    [InlineData("v: 127.0.0.1", "127.0.0.1")]
    [InlineData("v: 127.0.0.1:4222", "127.0.0.1:4222")]
    [InlineData("v: 0.0.0.0:-1", "0.0.0.0:-1")]
    [InlineData("v: localhost:4222", "localhost:4222")]
    [InlineData("v: 10s", "10s")]
    [InlineData("v: \"2m\"", "2m")]
    [InlineData("v: 1abc", "1abc")]
    [InlineData("v: nats://host:4222", "nats://host:4222")]
    public void AddressesAndDurationsAreStrings(string text, string expected) => Assert.Equal(expected, Plain(text, "v"));

    [Fact]
    public void UnquotedTwoMinutesIsASizeNotADuration()
    {
        // Go's lexer reads "2m" as 2 * 1000 * 1000; durations must be quoted (or end in a non-suffix unit like "s").
        Assert.Equal(2_000_000L, Plain("v: 2m", "v"));
    }

    [Fact]
    public void DoubleQuotedStringEscapes()
    {
        Assert.Equal("a\tb\nc\rd\"e\\fA", Plain("v: \"a\\tb\\nc\\rd\\\"e\\\\f\\x41\"", "v"));
    }

    [Fact]
    public void SingleQuotedStringIsRaw() => Assert.Equal("a\\tb $x", Plain("v: 'a\\tb $x'", "v"));

    [Fact]
    public void BareStringStopsAtWhitespaceAndKeepsHash()
    {
        Assert.Equal("abc#def", Plain("v: abc#def", "v"));
        Assert.Equal("abc", Plain("v: abc # comment", "v"));
    }

    [Fact]
    public void InvalidEscapeIsAnError()
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("v: \"a\\qb\"\n"));
        Assert.Contains("Invalid escape character 'q'", e.Message);
    }

    [Fact]
    public void Datetime() =>
        Assert.Equal(new DateTime(2016, 5, 4, 12, 30, 0, DateTimeKind.Utc), Plain("d: 2016-05-04T12:30:00Z", "d"));

    [Fact]
    public void PartialDateIsAnError()
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("d: 2016-05-04\n"));
        Assert.Contains("Expected 'T' in ISO8601 datetime", e.Message);
    }

    [Fact]
    public void NestedMapsWithAllSeparatorStyles()
    {
        var text = """
            authorization {
              user: derek
              password = "s3cr3t";
              timeout 1.5, nested { deep: [1, 2 ] }
            }
            other: { a: 1, b: 2 }
            """;
        var map = ConfigParser.Parse(text);
        var auth = map["authorization"].AsMap!;
        Assert.Equal("derek", auth["user"].Value);
        Assert.Equal("s3cr3t", auth["password"].Value);
        Assert.Equal(1.5, auth["timeout"].Value);
        Assert.Equal(new List<object> { 1L, 2L }, auth["nested"].AsMap!["deep"].ToPlain());
        Assert.Equal(2L, map["other"].AsMap!["b"].Value);
    }

    [Fact]
    public void ArraysMultiLineWithCommentsAndMixedTypes()
    {
        var text = """
            arr: [
              "a", 'b' # comment
              c
              // another comment
              1.5
              true
              { x: 1 }
              [ nested ]
            ]
            """;
        var list = Assert.IsType<List<object>>(Plain(text, "arr"));
        Assert.Equal("a", list[0]);
        Assert.Equal("b", list[1]);
        Assert.Equal("c", list[2]);
        Assert.Equal(1.5, list[3]);
        Assert.Equal(true, list[4]);
        Assert.Equal(1L, Assert.IsType<Dictionary<string, object>>(list[5])["x"]);
        Assert.Equal(new List<object> { "nested" }, list[6]);
    }

    [Fact]
    public void NumberDirectlyBeforeClosingBracketIsAGoQuirkError()
    {
        // nats-server 2.9.10 lexes "2]" as a string and never closes the array: the file is rejected.
        Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("a: [1, 2]\nb: 1\n"));
    }

    [Fact]
    public void OptionalSemicolonsAndCommasAtTopLevel()
    {
        var map = ConfigParser.Parse("a: 1; b: 2, c: 3\n");
        Assert.Equal(3L, map["c"].Value);
    }

    [Fact]
    public void JsonStyleDocumentIsAccepted()
    {
        var map = ConfigParser.Parse("{\n  \"port\": 4222,\n  \"http\": { \"port\": 8222 },\n  \"list\": [\"a\", \"b\"]\n}\n");
        Assert.Equal(4222L, map["port"].Value);
        Assert.Equal(8222L, map["http"].AsMap!["port"].Value);
    }

    [Fact]
    public void HeredocBlockKeepsTextUntilParenOnItsOwnLine()
    {
        var text = "cert: (\n-----BEGIN-----\nabc) not the end\n)\nnext: 1\n";
        var map = ConfigParser.Parse(text);
        Assert.Equal("\n-----BEGIN-----\nabc) not the end\n", map["cert"].Value);
        Assert.Equal(1L, map["next"].Value);
    }

    [Fact]
    public void UnterminatedBlockIsAnError()
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("cert: (\nabc\n"));
        Assert.Contains("Unexpected EOF processing block.", e.Message);
    }

    [Fact]
    public void LaterDuplicateKeyWins() => Assert.Equal(2L, Plain("a: 1\na: 2\n", "a"));

    [Fact]
    public void KeysAreCaseSensitiveInTheTree()
    {
        var map = ConfigParser.Parse("Port: 1\nport: 2\n");
        Assert.Equal(1L, map["Port"].Value);
        Assert.Equal(2L, map["port"].Value);
    }

    [Theory]
    [InlineData("a: 1 2\n", "Expected a top-level value to end with a new line, comment or EOF, but got '2' instead.")]
    [InlineData("a = \n", "Expected value but found new line")]
    [InlineData("= 1\n", "Unexpected key separator '='")]
    [InlineData("a: .5\n", "Floats must start with a digit")]
    [InlineData("a: [1,,2]\n", "Unexpected array value terminator ','.")]
    [InlineData("a { b: 1 x }\n", "Expected a map value terminator \",\" or a map terminator \"}\", but got 'x' instead.")]
    [InlineData("a { b: 1\n", "Unexpected EOF processing map.")]
    [InlineData("a: \"open\n", "Unexpected EOF.")]
    [InlineData("a: 1.x\n", "Floats must have a digit after the '.', but got 'x' instead.")]
    public void SyntaxErrorsUseGoTexts(string text, string expected)
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse(text));
        Assert.StartsWith("Parse error on line ", e.Message);
        Assert.Contains(expected, e.Message);
    }

    [Fact]
    public void SyntaxErrorNamesFileAndLine()
    {
        using var dir = new TempDirectory();
        string file = dir.Write("bad.conf", "port: 4222\n\nhttp: 1 2\n");
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.ParseFile(file));
        Assert.StartsWith($"{file}: Parse error on line 3:", e.Message);
    }

    [Fact]
    public void PositionsPointAtKeysWithGoColumns()
    {
        var map = ConfigParser.Parse("port: 1\nblock {\n  inner: 2\n}\n", "f.conf");
        Assert.Equal("f.conf:1:0", map["port"].Source);
        Assert.Equal("f.conf:3:3", map["block"].AsMap!["inner"].Source);
    }

    [Fact]
    public void MissingFileReportsGoStyleOpenError()
    {
        using var dir = new TempDirectory();
        string file = System.IO.Path.Combine(dir.Path, "missing.conf");
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.ParseFile(file));
        Assert.Equal($"open {file}: no such file or directory", e.Message);
    }
}
