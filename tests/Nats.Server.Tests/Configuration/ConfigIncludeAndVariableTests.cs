using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

public class ConfigIncludeAndVariableTests
{
    [Fact]
    public void IncludeSplicesKeysRelativeToTheIncludingFile()
    {
        using var dir = new TempDirectory();
        dir.Write("sub/auth.conf", "user: alice\npassword: pw\n");
        dir.Write("sub/limits.conf", "max_payload: 2MB\n");
        string main = dir.Write("main.conf", "port: 4333\ninclude 'sub/limits.conf'\nauthorization {\n  include \"sub/auth.conf\"\n}\n");

        var map = ConfigParser.ParseFile(main);

        Assert.Equal(2L * 1024 * 1024, map["max_payload"].Value);
        Assert.Equal("alice", map["authorization"].AsMap!["user"].Value);
        Assert.EndsWith("sub/auth.conf", map["authorization"].AsMap!["user"].File);
    }

    [Fact]
    public void BareIncludePathAndNestedIncludes()
    {
        using var dir = new TempDirectory();
        dir.Write("a/b.conf", "include c.conf\n");
        dir.Write("a/c.conf", "deep: yes\n");
        string main = dir.Write("main.conf", "include a/b.conf\n");
        Assert.Equal(true, ConfigParser.ParseFile(main)["deep"].Value);
    }

    [Fact]
    public void MissingIncludeNamesTheInclude()
    {
        using var dir = new TempDirectory();
        string main = dir.Write("main.conf", "include nothere.conf\n");
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.ParseFile(main));
        Assert.Contains("error parsing include file 'nothere.conf', open ", e.Message);
        Assert.Contains("no such file or directory", e.Message);
    }

    [Fact]
    public void SyntaxErrorInsideIncludeNamesBothFiles()
    {
        using var dir = new TempDirectory();
        dir.Write("bad.conf", "x: 1\ny: [\n");
        string main = dir.Write("main.conf", "include bad.conf\n");
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.ParseFile(main));
        Assert.Contains("error parsing include file 'bad.conf'", e.Message);
        Assert.Contains("bad.conf: Parse error on line", e.Message);
    }

    [Fact]
    public void IncludeValueMustNotBeANumber()
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("include 42\n"));
        Assert.Contains("Expected include value but found start of a number", e.Message);
    }

    [Fact]
    public void VariablesResolveFromEnclosingBlocks()
    {
        var text = """
            TOP: "top-value"
            size: 10
            block {
              INNER: 5
              a: $INNER
              b: $TOP
              c: [ $size ]
            }
            """;
        var block = ConfigParser.Parse(text)["block"].AsMap!;
        Assert.Equal(5L, block["a"].Value);
        Assert.Equal("top-value", block["b"].Value);
        Assert.Equal(new List<object> { 10L }, block["c"].ToPlain());
    }

    [Fact]
    public void InnerBlockVariablesAreNotVisibleOutside()
    {
        var text = "block { HIDDEN: 1 }\nuse: $HIDDEN_NOT_SET_ANYWHERE_42\n";
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse(text));
        Assert.Equal("variable reference for 'HIDDEN_NOT_SET_ANYWHERE_42' on line 2 can not be found", e.Message);
    }

    [Fact]
    public void VariableCanHoldAMap()
    {
        var map = ConfigParser.Parse("LIMITS: { a: 1 }\nuse: $LIMITS\n");
        Assert.Equal(1L, map["use"].AsMap!["a"].Value);
        Assert.True(map["LIMITS"].UsedAsVariable);
        Assert.False(map["use"].UsedAsVariable);
    }

    [Fact]
    public void EnvironmentVariableFallbackIsParsedAsAValue()
    {
        string name = "NATS_CFG_TEST_" + Guid.NewGuid().ToString("N");
        Environment.SetEnvironmentVariable(name, "8KB");
        try
        {
            Assert.Equal(8192L, ConfigParser.Parse($"v: ${name}\n")["v"].Value);
        }
        finally
        {
            Environment.SetEnvironmentVariable(name, null);
        }
    }

    [Fact]
    public void FileVariableShadowsEnvironment()
    {
        string name = "NATS_CFG_TEST_" + Guid.NewGuid().ToString("N");
        Environment.SetEnvironmentVariable(name, "from-env");
        try
        {
            Assert.Equal("from-file", ConfigParser.Parse($"{name}: from-file\nv: ${name}\n")["v"].Value);
        }
        finally
        {
            Environment.SetEnvironmentVariable(name, null);
        }
    }

    [Fact]
    public void EnvironmentReferenceCycleIsDetected()
    {
        string a = "NATS_CFG_A_" + Guid.NewGuid().ToString("N");
        string b = "NATS_CFG_B_" + Guid.NewGuid().ToString("N");
        Environment.SetEnvironmentVariable(a, "$" + b);
        Environment.SetEnvironmentVariable(b, "$" + a);
        try
        {
            var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse($"v: ${a}\n"));
            Assert.Contains($"variable reference cycle for '{a}'", e.Message);
        }
        finally
        {
            Environment.SetEnvironmentVariable(a, null);
            Environment.SetEnvironmentVariable(b, null);
        }
    }

    [Fact]
    public void BcryptHashIsALiteralNotAVariable()
    {
        const string hash = "$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG";
        Assert.Equal(hash, ConfigParser.Parse($"password: {hash}\n")["password"].Value);
    }

    [Fact]
    public void MissingVariableIsAnErrorWithLine()
    {
        var e = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("a: 1\nb: $NATS_CFG_SURELY_UNDEFINED_VAR\n"));
        Assert.Equal("variable reference for 'NATS_CFG_SURELY_UNDEFINED_VAR' on line 2 can not be found", e.Message);
    }

    [Fact]
    public void QuotedDollarIsNotAVariable() => Assert.Equal("$NOPE", ConfigParser.Parse("v: \"$NOPE\"\n")["v"].Value);
}
