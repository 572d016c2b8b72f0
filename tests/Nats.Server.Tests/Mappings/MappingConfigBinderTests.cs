using Nats.Server.Configuration;
using Nats.Server.Mappings;

namespace Nats.Server.Tests.Mappings;

public class MappingConfigBinderTests
{
    private static (ServerOptions Options, ConfigBindResult Result) Bind(string text)
    {
        var options = new ServerOptions();
        return (options, ConfigBinder.Bind(options, ConfigParser.Parse(text, "m.conf")));
    }

    [Fact]
    public void BindsEveryForm()
    {
        var (options, result) = Bind("""
            mappings {
              foo: bar
              "a.*.*": "b.$2.$1"
              "w.>": [{destination: "x.>", weight: 40%}, {dest: "y.>", weight: "60%"}]
              "p.*": {destination: "q.$1", weight: 30}
              "c": [{destination: "d", weight: 100, cluster: "east"}]
            }
            """);
        Assert.Empty(result.Errors);
        Assert.Empty(options.UnsupportedConfig);
        Assert.Equal(
            new[] { "foo", "a.*.*", "w.>", "p.*", "c" },
            options.Mappings.Select(m => m.Source));
        Assert.Equal(new MappingDestination("bar"), Assert.Single(options.Mappings[0].Destinations));
        Assert.Equal(new[] { new MappingDestination("x.>", 40), new MappingDestination("y.>", 60) }, options.Mappings[2].Destinations);
        Assert.Equal(new MappingDestination("q.$1", 30), Assert.Single(options.Mappings[3].Destinations));
        Assert.Equal(new MappingDestination("d", 100, "east"), Assert.Single(options.Mappings[4].Destinations));
    }

    [Fact]
    public void MapsIsAnAlias()
    {
        var (options, result) = Bind("maps { foo: bar }\n");
        Assert.Empty(result.Errors);
        Assert.Equal("foo", Assert.Single(options.Mappings).Source);
    }

    [Theory]
    [InlineData("mappings { \"a.*.*\": \"b.$2\" }", "Error adding mapping for \"a.*.*\" to \"b.$2\" : invalid mapping destination: not using all of the token wildcard(s) in b.$2")]
    [InlineData("mappings { \"a.*\": [{destination: \"x.$1\", weight: 140}] }", "Invalid weight 140 for mapping destination")]
    [InlineData("mappings { \"a.*\": [{destination: \"x.$1\", weight: \"-1%\"}] }", "Invalid weight -1 for mapping destination")]
    [InlineData("mappings { \"a.*\": [{destination: \"x.$1\", weight: \"ab\"}] }", "Invalid weight \"ab\" for mapping destination")]
    [InlineData("mappings { \"a.*\": [{destination: \"x.$1\", weight: 0.5}] }", "Unknown entry type for weight of 0.5\n")]
    [InlineData("mappings { \"a.*\": [{destination: \"x.$1\"}] }", "Missing weight for mapping destination \"x.$1\"")]
    [InlineData("mappings { \"a.*\": {destination: \"x.$1\", weight: 50, foo: 1} }", "Unknown field \"foo\" for mapping destination")]
    [InlineData("mappings { \"a.*\": 5 }", "Expected an entry for the mapping destination")]
    [InlineData("mappings { \"j..k\": x }", "Subject \"j..k\" is not a valid subject")]
    [InlineData("mappings { w: [{destination: x, weight: 40}, {destination: y, weight: 70}] }", "interface conversion: interface {} is []interface {}, not string")]
    [InlineData("mappings { w: {destination: \"a b\", weight: 40} }", "interface conversion: interface {} is map[string]interface {}, not string")]
    [InlineData("mappings { w: {destination: 5, weight: 40} }", "interface conversion: interface {} is int64, not string")]
    [InlineData("mappings: 5", "interface conversion: interface {} is int64, not map[string]interface {}")]
    public void ReportsGoErrors(string text, string error)
    {
        var (_, result) = Bind(text);
        var message = Assert.Single(result.Errors);
        Assert.StartsWith("m.conf:", message);
        Assert.EndsWith(": " + error, message);
    }

    [Fact]
    public void PlainTreeBindsWithoutPositions()
    {
        // The accounts binder hands over ConfigValue.ToPlain() output.
        var tree = ConfigParser.Parse("m { foo: bar, \"x.*\": \"y.$2\" }", "p.conf")["m"].ToPlain();
        var errors = new List<string>();
        var mappings = MappingConfigBinder.Bind(tree, errors);
        Assert.Equal("foo", Assert.Single(mappings).Source);
        Assert.Equal(
            "Error adding mapping for \"x.*\" to \"y.$2\" : invalid mapping destination: wildcard index out of range in $2: [2]",
            Assert.Single(errors));
    }
}
