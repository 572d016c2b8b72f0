using Nats.Server.Auth;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Auth;

/// <summary>The binder works on the plain value tree a config parser produces (maps, lists, scalars).</summary>
public sealed class AuthConfigBinderTests
{
    private const string UserKey = "UD7GDMLP62QES2BSXTHS32TUKQCIYQUNY6WSF4WXFYCZEVTTAQCMJVAR";

    private static Dictionary<string, object> Map(params (string Key, object Value)[] entries) =>
        entries.ToDictionary(e => e.Key, e => e.Value, StringComparer.Ordinal);

    [Fact]
    public void Binds_users_nkeys_permissions_and_defaults()
    {
        var block = Map(
            ("users", new List<object>
            {
                Map(("user", "alice"), ("password", "pw"), ("permissions", Map(
                    ("publish", Map(("allow", new List<object> { "a.>", "b" }), ("deny", "a.secret"))),
                    ("subscribe", new List<object> { "x", "y q" }),
                    ("allow_responses", Map(("max", 3L), ("expires", "1m30s")))))),
                Map(("USER", "bob"), ("Pass", "pw2")),
                Map(("nkey", UserKey), ("permissions", Map(("sub", Map(("deny", ">")))))),
            }),
            ("Default_Permissions", Map(("pub", "default.>"))));
        var o = new ServerOptions();
        Assert.Empty(AuthConfigBinder.BindAuthorization(block, o));

        var alice = o.Users!.Single(u => u.Username == "alice");
        Assert.Equal("pw", alice.Password);
        Assert.Equal(["a.>", "b"], alice.Permissions!.Publish!.Allow);
        Assert.Equal(["a.secret"], alice.Permissions.Publish.Deny);
        Assert.Equal(["x", "y q"], alice.Permissions.Subscribe!.Allow);
        Assert.Equal(3, alice.Permissions.Response!.MaxMsgs);
        Assert.Equal(TimeSpan.FromSeconds(90), alice.Permissions.Response.Expires);

        var bob = o.Users!.Single(u => u.Username == "bob");
        Assert.Equal("pw2", bob.Password);
        Assert.Null(bob.Permissions);
        Assert.Equal(["default.>"], o.DefaultPermissions!.Publish!.Allow);

        var nkey = Assert.Single(o.Nkeys!);
        Assert.Equal(UserKey, nkey.Nkey);
        Assert.Equal([">"], nkey.Permissions!.Subscribe!.Deny);
    }

    [Fact]
    public void Allow_responses_true_turns_off_blanket_publish()
    {
        var p = AuthConfigBinder.ParsePermissions(Map(("allow_responses", true)), []);
        Assert.NotNull(p!.Response);
        Assert.Equal(1, p.Response.MaxMsgs);
        Assert.Equal(TimeSpan.FromMinutes(2), p.Response.Expires);
        Assert.Empty(p.Publish!.Allow!);
    }

    [Fact]
    public void Empty_subject_list_means_no_restriction_like_go()
    {
        var p = AuthConfigBinder.ParsePermissions(Map(("publish", Map(("allow", new List<object>())))), []);
        Assert.Null(p!.Publish!.Allow);
    }

    [Theory]
    [InlineData("user entry without a name", "User entry requires a user")]
    [InlineData("bad nkey", "Not a valid public nkey for a user")]
    [InlineData("nkey with password", "Nkey users do not take usernames or passwords")]
    [InlineData("bad subject", "subject \"foo..bar\" is not a valid subject")]
    [InlineData("bad permission key", "Unknown field \"publsh\" parsing permissions")]
    public void Reports_go_errors(string what, string expected)
    {
        object users = what switch
        {
            "user entry without a name" => new List<object> { Map(("password", "x")) },
            "bad nkey" => new List<object> { Map(("nkey", "UNOTAKEY")) },
            "nkey with password" => new List<object> { Map(("nkey", UserKey), ("password", "x")) },
            "bad subject" => new List<object> { Map(("user", "a"), ("permissions", Map(("publish", "foo..bar")))) },
            _ => new List<object> { Map(("user", "a"), ("permissions", Map(("publsh", "foo")))) },
        };
        var errors = AuthConfigBinder.BindAuthorization(Map(("users", users)), new ServerOptions());
        Assert.Contains(expected, errors);
    }

    [Fact]
    public void Users_conflict_with_single_user_and_token()
    {
        var block = Map(("users", new List<object> { Map(("user", "a")) }));
        Assert.Contains("Can not have a single user/pass and a users array", AuthConfigBinder.BindAuthorization(block, new ServerOptions { Username = "x" }));
        Assert.Contains("Can not have a token and a users array", AuthConfigBinder.BindAuthorization(block, new ServerOptions { AuthToken = "t" }));
    }

    [Fact]
    public void No_auth_user_must_name_a_configured_user()
    {
        Assert.Equal("no_auth_user: \"x\" present, but users are not defined", AuthConfigBinder.ValidateNoAuthUser(new ServerOptions { NoAuthUser = "x" }));
        var o = new ServerOptions { NoAuthUser = "x", Users = [new User { Username = "y" }] };
        Assert.Equal("no_auth_user: \"x\" not present as user in authorization block or account configuration", AuthConfigBinder.ValidateNoAuthUser(o));
        o.NoAuthUser = "y";
        Assert.Null(AuthConfigBinder.ValidateNoAuthUser(o));
    }

    [Theory]
    [InlineData("2m", 120_000)]
    [InlineData("1h30m", 5_400_000)]
    [InlineData("1.5s", 1_500)]
    [InlineData("250ms", 250)]
    [InlineData("-1s", -1_000)]
    [InlineData("0", 0)]
    public void Parses_go_durations(string text, double milliseconds)
    {
        Assert.True(GoDuration.TryParse(text, out var d, out _));
        Assert.Equal(milliseconds, d.TotalMilliseconds);
    }

    [Theory]
    [InlineData("")]
    [InlineData("5")]
    [InlineData("1x")]
    public void Rejects_bad_durations(string text) => Assert.False(GoDuration.TryParse(text, out _, out _));

    [Fact]
    public void Connection_types_are_upper_cased_and_checked()
    {
        var o = new ServerOptions();
        var errors = AuthConfigBinder.BindAuthorization(Map(("users", new List<object>
        {
            Map(("user", "a"), ("allowed_connection_types", new List<object> { "standard", "Websocket" })),
            Map(("user", "b"), ("clients", new List<object> { "bogus" })),
        })), o);
        Assert.Equal(["STANDARD", "WEBSOCKET"], o.Users![0].AllowedConnectionTypes);
        Assert.Equal(["invalid connection types [\"BOGUS\"]"], errors);
        Assert.True(ConnectionTypes.Allows(null, ConnectionTypes.Standard));
        Assert.True(ConnectionTypes.Allows(["STANDARD"], ConnectionTypes.Standard));
        Assert.False(ConnectionTypes.Allows(["WEBSOCKET"], ConnectionTypes.Standard));
    }
}
