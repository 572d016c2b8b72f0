using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

/// <summary>Documents from the Go parser's own expectations (conf package behaviour at v2.9.10).</summary>
public class GoParserCompatibilityTests
{
    private static Dictionary<string, object> Plain(string text, string file = "") =>
        ConfigParser.Parse(text, file).ToDictionary(kv => kv.Key, kv => kv.Value.ToPlain());

    [Fact]
    public void SimpleTopLevelWithSemicolons()
    {
        var m = Plain("foo='1'; bar=2.2; baz=true; boo=22");
        Assert.Equal("1", m["foo"]);
        Assert.Equal(2.2, m["bar"]);
        Assert.Equal(true, m["baz"]);
        Assert.Equal(22L, m["boo"]);
    }

    [Fact]
    public void NestedVariableScoping()
    {
        var m = Plain("\n  index = 22\n  nest {\n    index = 11\n    foo = $index\n  }\n  bar = $index\n");
        var nest = Assert.IsType<Dictionary<string, object>>(m["nest"]);
        Assert.Equal(11L, nest["foo"]);
        Assert.Equal(22L, m["bar"]);
    }

    [Theory]
    [InlineData("22", 22L)]
    [InlineData("xyz", "xyz")]
    [InlineData("3Gyz", "3Gyz")]
    [InlineData("'3xyz'", "3xyz")]
    public void EnvironmentValuesAreLexedAsValues(string env, object expected)
    {
        string name = "NATS_CFG_ENV_" + Guid.NewGuid().ToString("N");
        Environment.SetEnvironmentVariable(name, env);
        try
        {
            Assert.Equal(expected, Plain($"foo = ${name}")["foo"]);
        }
        finally
        {
            Environment.SetEnvironmentVariable(name, null);
        }
    }

    [Fact]
    public void RoutesArrayWithUrlsAndBothCommentStyles()
    {
        var text = """
            cluster {
              port: 4244

              authorization {
                user: route_user
                password: top_secret
                timeout: 1
              }

              # hash comment
              // slash comment

              routes = [
                nats-route://foo:bar@apcera.me:4245
                nats-route://foo:bar@apcera.me:4246
              ]
            }
            """;
        var cluster = Assert.IsType<Dictionary<string, object>>(Plain(text)["cluster"]);
        Assert.Equal(new List<object> { "nats-route://foo:bar@apcera.me:4245", "nats-route://foo:bar@apcera.me:4246" }, cluster["routes"]);
        Assert.Equal(1L, Assert.IsType<Dictionary<string, object>>(cluster["authorization"])["timeout"]);
    }

    [Fact]
    public void SingleQuotedStringsSpanLinesAndKeepQuotes()
    {
        var foo = Assert.IsType<Dictionary<string, object>>(Plain("foo  {\n  expr = '(true == \"false\")'\n  text = 'This is a multi-line\ntext block.'\n}\n")["foo"]);
        Assert.Equal("(true == \"false\")", foo["expr"]);
        Assert.Equal("This is a multi-line\ntext block.", foo["text"]);
    }

    [Fact]
    public void ArrayOfMaps()
    {
        var list = Assert.IsType<List<object>>(Plain("  array [\n    { abc: 123 }\n    { xyz: \"word\" }\n  ]\n")["array"]);
        Assert.Equal(123L, Assert.IsType<Dictionary<string, object>>(list[0])["abc"]);
        Assert.Equal("word", Assert.IsType<Dictionary<string, object>>(list[1])["xyz"]);
    }

    [Fact]
    public void IncludedVariablesAreVisibleAfterTheIncludeWithPositionsInTheIncludedFile()
    {
        using var dir = new TempDirectory();
        dir.Write("includes/passwords.conf", "# Just foo & bar for testing\nALICE_PASS: $2a$10$abc\nBOB_PASS: $2a$11$def\n");
        dir.Write("includes/users.conf", "# Users\n\ninclude ./passwords.conf;\n\nusers = [\n  {user: alice, password: $ALICE_PASS}\n  {user: bob,   password: $BOB_PASS}\n]\n");
        string main = dir.Write("simple.conf", "listen: 127.0.0.1:4222\n\nauthorization {\n  include 'includes/users.conf' # Pull in from file\n  timeout: 0.5\n}\n");

        var auth = ConfigParser.ParseFile(main)["authorization"].AsMap!;

        Assert.Equal("$2a$10$abc", auth["ALICE_PASS"].Value);
        Assert.Equal(2, auth["ALICE_PASS"].Line);
        Assert.Equal(1, auth["ALICE_PASS"].Column);
        Assert.Equal(3, auth["BOB_PASS"].Line);
        var users = auth["users"].AsList!;
        Assert.Equal("$2a$11$def", users[1].AsMap!["password"].Value);
        Assert.Equal(0.5, auth["timeout"].Value);
    }

    [Theory]
    [InlineData("A@@Føøøø?˛ø:{øøøø˙˙")]
    [InlineData("include \"9/\uFFFD")]
    public void TruncatedInputEndsWithUnexpectedEof(string text)
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse(text));
        Assert.Contains("Unexpected EOF", e.Message);
    }
}

public class GoParserQuirkTests
{
    [Fact]
    public void UnrecognisedSizeSuffixStoresNothingLikeGo()
    {
        var map = ConfigParser.Parse("a: 1\nb: 4KBI\n");
        Assert.Equal(["a"], map.Keys);
    }
}
