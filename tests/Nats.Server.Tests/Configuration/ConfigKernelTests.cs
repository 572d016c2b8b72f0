using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

/// <summary>The binding kernel every block binder uses: getters, Go's texts, sizes, durations, host:port, unknown keys.</summary>
public class ConfigKernelTests
{
    /// <summary>The value of <c>v</c> in <paramref name="text"/>, parsed as file "k.conf".</summary>
    private static ConfigValue Value(string text) => ConfigParser.Parse(text + "\n", "k.conf")["v"];

    private static string Fails(Func<object> read) => Assert.Throws<ConfigBindException>(read).Message;

    [Fact]
    public void Getters_return_values_of_their_type()
    {
        Assert.Equal("abc", Value("v: abc").String());
        Assert.True(Value("v: true").Bool());
        Assert.Equal(42L, Value("v: 42").Int64());
        Assert.Equal(7, Value("v: 7").Int32("v"));
        Assert.Equal(["a"], Value("v: { a: 1 }").Map().Keys);
        Assert.Equal(2, Value("v: [a, b]").List().Count);
    }

    [Theory]
    [InlineData("v: 1", "String", "k.conf:1:0: interface conversion: interface {} is int64, not string")]
    [InlineData("v: abc", "Bool", "k.conf:1:0: interface conversion: interface {} is string, not bool")]
    [InlineData("v: 1.5", "Int64", "k.conf:1:0: interface conversion: interface {} is float64, not int64")]
    [InlineData("v: [a]", "Map", "k.conf:1:0: interface conversion: interface {} is []interface {}, not map[string]interface {}")]
    [InlineData("v: { a: 1 }", "List", "k.conf:1:0: interface conversion: interface {} is map[string]interface {}, not []interface {}")]
    [InlineData("v: 2020-01-01T00:00:00Z", "Int64", "k.conf:1:0: interface conversion: interface {} is time.Time, not int64")]
    [InlineData("x: 1\n  v: false", "String", "k.conf:2:3: interface conversion: interface {} is bool, not string")]
    public void Mismatches_are_Gos_interface_conversion_panic_at_the_value(string text, string getter, string expected)
    {
        var v = Value(text);
        Func<object> read = getter switch
        {
            "String" => () => v.String(),
            "Bool" => () => v.Bool(),
            "Int64" => () => v.Int64(),
            "Map" => () => v.Map(),
            _ => () => v.List(),
        };
        Assert.Equal(expected, Fails(read));
        Assert.Equal(expected, v.MismatchText(getter switch
        {
            "String" => "string",
            "Bool" => "bool",
            "Int64" => "int64",
            "Map" => "map[string]interface {}",
            _ => "[]interface {}",
        }));
    }

    [Fact]
    public void Int32_refuses_what_an_int_field_cannot_hold()
    {
        Assert.Equal("k.conf:1:0: max_payload value is too big", Fails(() => Value("v: 4GB").Int32("max_payload")));
        Assert.Equal(int.MinValue, Value("v: -2147483648").Int32("x"));
    }

    [Fact]
    public void Durations_take_Go_strings_and_warn_on_seconds()
    {
        var warnings = new List<string>();
        Assert.Equal(TimeSpan.FromSeconds(90), Value("v: \"1m30s\"").Duration("ping_interval", warnings));
        Assert.Empty(warnings);
        Assert.Equal(TimeSpan.FromSeconds(5), Value("v: 5").Duration("ping_interval", warnings));
        Assert.Equal(["k.conf:1:0: invalid use of field \"ping_interval\": ping_interval should be converted to a duration"], warnings);
        Assert.Equal("k.conf:1:0: error parsing ping_interval: time: unknown unit \"x\" in duration \"2x\"", Fails(() => Value("v: \"2x\"").Duration("ping_interval", warnings)));
        Assert.Equal("k.conf:1:0: interface conversion: interface {} is bool, not int64", Fails(() => Value("v: true").Duration("ping_interval", warnings)));
    }

    [Fact]
    public void DurationString_requires_a_string()
    {
        Assert.Equal(TimeSpan.FromMilliseconds(1500), Value("v: \"1.5s\"").DurationString("lame_duck_duration"));
        Assert.Equal("k.conf:1:0: interface conversion: interface {} is int64, not string", Fails(() => Value("v: 30").DurationString("lame_duck_duration")));
        Assert.Equal("k.conf:1:0: error parsing lame_duck_duration: time: missing unit in duration \"30\"", Fails(() => Value("v: \"30\"").DurationString("lame_duck_duration")));
    }

    [Theory]
    [InlineData("v: 5", 5L)]
    [InlineData("v: 1MB", 1L << 20)]
    [InlineData("v: 64KB", 64L << 10)]
    [InlineData("v: 1M", 1_000_000L)]
    [InlineData("v: \"10G\"", 10L << 30)]
    [InlineData("v: \"3K\"", 3L << 10)]
    [InlineData("v: \"2T\"", 2L << 40)]
    [InlineData("v: \"-1M\"", -1L << 20)]
    [InlineData("v: \"\"", 0L)]
    public void Storage_sizes_parse_as_Gos_getStorageSize(string text, long expected)
    {
        Assert.True(Value(text).TryStorageSize(out var size, out var error), error);
        Assert.Equal(expected, size);
    }

    [Theory]
    [InlineData("v: \"10Q\"", "sizes defined as strings must end in K, M, G, T")]
    [InlineData("v: \"1MB\"", "strconv.ParseInt: parsing \"1M\": invalid syntax")]
    [InlineData("v: \"K\"", "strconv.ParseInt: parsing \"\": invalid syntax")]
    [InlineData("v: \"99999999999999999999K\"", "strconv.ParseInt: parsing \"99999999999999999999\": value out of range")]
    [InlineData("v: true", "must be int64 or string")]
    public void Storage_size_errors_are_Gos(string text, string expected)
    {
        Assert.False(Value(text).TryStorageSize(out _, out var error));
        Assert.Equal(expected, error);
    }

    [Theory]
    [InlineData("v: 4333", null, 4333)]
    [InlineData("v: \"127.0.0.1:4333\"", "127.0.0.1", 4333)]
    [InlineData("v: \":4333\"", "", 4333)]
    [InlineData("v: \"[::1]:-1\"", "::1", -1)]
    public void HostPort_reads_a_port_or_host_and_port(string text, string? host, int port) =>
        Assert.Equal((host, port), Value(text).HostPort());

    [Theory]
    [InlineData("v: abc", "k.conf:1:0: could not parse address string \"abc\"")]
    [InlineData("v: \"a:b:c\"", "k.conf:1:0: could not parse address string \"a:b:c\"")]
    [InlineData("v: \"a:b\"", "k.conf:1:0: could not parse port \"b\"")]
    [InlineData("v: true", "k.conf:1:0: expected port or host:port, got bool")]
    [InlineData("v: 9999999999", "k.conf:1:0: port value is too big")]
    public void HostPort_errors_are_Gos(string text, string expected) =>
        Assert.Equal(expected, Fails(() => Value(text).HostPort()));

    [Fact]
    public void StringOrList_is_Gos_parseStringArray()
    {
        Assert.Equal(["a"], Value("v: a").StringOrList("allowed origins"));
        Assert.Equal(["a", "b"], Value("v: [a, b]").StringOrList("allowed origins"));
        Assert.Equal("k.conf:1:7: error parsing allowed origins: unsupported type in array bool", Fails(() => Value("v: [a, true]").StringOrList("allowed origins")));
        Assert.Equal("k.conf:1:0: error parsing allowed origins: unsupported type bool", Fails(() => Value("v: true").StringOrList("allowed origins")));
    }

    [Theory]
    [InlineData("v: 3", 3.0)]
    [InlineData("v: 0.5", 0.5)]
    [InlineData("v: \"3\"", 1.0)]
    public void SecondsOrOne_is_Gos_lenient_auth_timeout(string text, double expected) =>
        Assert.Equal(expected, Value(text).SecondsOrOne());

    [Fact]
    public void ForEach_lowers_keys_reports_unknown_ones_and_goes_on_after_an_error()
    {
        var block = Value("""
            v {
              Port: 1
              bogus: 2
              name: 4
              host: h
            }
            """).Map();
        var errors = new List<string>();
        var bound = new List<string>();
        ConfigBlock.ForEach(block, errors, (key, value) =>
        {
            switch (key)
            {
                case "port" or "name" or "host":
                    bound.Add(key + "=" + value.String());
                    return true;
                default:
                    return false;
            }
        });
        Assert.Equal(["host=h"], bound);
        Assert.Equal(
            [
                "k.conf:2:3: interface conversion: interface {} is int64, not string",
                "k.conf:3:3: unknown field \"bogus\"",
                "k.conf:4:3: interface conversion: interface {} is int64, not string",
            ],
            errors);
    }

    [Fact]
    public void Unknown_field_names_are_quoted_as_Gos_percent_q()
    {
        var errors = new List<string>();
        ConfigBlock.Unknown("we\"ird\t", new ConfigValue(1L, "k.conf", 4, 2), errors);
        Assert.Equal(["k.conf:4:2: unknown field \"we\\\"ird\\t\""], errors);
    }

    [Fact]
    public void Unknown_keys_used_as_variables_are_definitions_not_errors()
    {
        var config = ConfigParser.Parse("v { PORT: 4333, port: $PORT, other: 1 }", "k.conf");
        var errors = new List<string>();
        ConfigBlock.ForEach(config["v"].Map(), errors, (key, value) => key == "port");
        Assert.Equal(["k.conf:1:29: unknown field \"other\""], errors);
    }

    [Fact]
    public void Go_texts_for_plain_trees_match_those_for_values()
    {
        Assert.Equal("map[string]interface {}", GoConfigText.TypeName(new Dictionary<string, object>()));
        Assert.Equal("[]interface {}", GoConfigText.TypeName(new List<object>()));
        Assert.Equal("float64", GoConfigText.TypeName(Value("v: 1.5")));
        Assert.Equal("nil", GoConfigText.TypeName(null));
        Assert.Equal("true", GoConfigText.Value(true));
        Assert.Equal("1.5", GoConfigText.Value(1.5));
        Assert.Equal("interface conversion: interface {} is bool, not string", GoConfigText.InterfaceConversion("bool", "string"));
    }

    [Fact]
    public void A_positionless_exception_keeps_its_reason_for_the_catcher_to_place()
    {
        var e = new ConfigBindException("boom");
        Assert.Null(e.Position);
        Assert.Equal("boom", e.Message);
        var placed = new ConfigBindException(Value("v: 1"), "boom");
        Assert.Equal("k.conf:1:0", placed.Position);
        Assert.Equal("boom", placed.Reason);
    }
}
