using System.Text;
using Nats.Server.Auth;

namespace Nats.Server.Tests.Auth;

public sealed class ClientPermissionsTests
{
    private static ClientPermissions For(Permissions p) => new(new CompiledPermissions(CompiledPermissions.Normalize(p)));

    private static bool Pub(ClientPermissions c, string subject) => c.CanPublish(Encoding.UTF8.GetBytes(subject));

    [Fact]
    public void Publish_allow_then_deny()
    {
        var c = For(new Permissions { Publish = new SubjectPermission { Allow = ["foo.>"], Deny = ["foo.secret"] } });
        Assert.True(Pub(c, "foo.a"));
        Assert.False(Pub(c, "foo.secret"));
        Assert.False(Pub(c, "bar"));
        // Cached answers stay the same.
        Assert.True(Pub(c, "foo.a"));
        Assert.False(Pub(c, "foo.secret"));
    }

    [Fact]
    public void Empty_publish_allow_list_denies_everything_but_null_allows_everything()
    {
        Assert.False(Pub(For(new Permissions { Publish = new SubjectPermission { Allow = [] } }), "x"));
        Assert.True(Pub(For(new Permissions { Publish = new SubjectPermission { Deny = ["y"] } }), "x"));
        Assert.True(Pub(For(new Permissions { Subscribe = new SubjectPermission { Allow = ["y"] } }), "x"));
    }

    [Fact]
    public void Cache_stays_correct_past_its_size_limit()
    {
        var c = For(new Permissions { Publish = new SubjectPermission { Allow = ["even.*"] } });
        for (var round = 0; round < 2; round++)
        {
            for (var i = 0; i < 1000; i++)
            {
                Assert.Equal(i % 2 == 0, Pub(c, i % 2 == 0 ? $"even.{i}" : $"odd.{i}"));
            }
        }
    }

    [Fact]
    public void Subscribe_queue_rules()
    {
        var c = For(new Permissions { Subscribe = new SubjectPermission { Allow = ["foo", "foo v1", "bar q.*"], Deny = ["baz", "foo bad"] } });
        Assert.True(c.CanSubscribe("foo", null));
        Assert.True(c.CanSubscribe("foo", "v1"));
        Assert.False(c.CanSubscribe("foo", "v2"));
        Assert.True(c.CanSubscribe("bar", "q.x"));
        Assert.False(c.CanSubscribe("bar", null));
        Assert.False(c.CanSubscribe("baz", null));
        Assert.False(c.CanSubscribe("foo", "bad"));
    }

    [Fact]
    public void Wide_wildcard_subscription_turns_on_delivery_filter()
    {
        var c = For(new Permissions { Subscribe = new SubjectPermission { Deny = ["foo.secret"] } });
        Assert.True(c.AllowDelivery("foo.secret"u8, default));
        Assert.False(c.CanSubscribe("foo.secret", null));
        Assert.True(c.CanSubscribe("bar.*", null));
        Assert.True(c.AllowDelivery("foo.secret"u8, default));
        Assert.True(c.CanSubscribe("foo.*", null));
        Assert.False(c.AllowDelivery("foo.secret"u8, default));
        Assert.True(c.AllowDelivery("foo.public"u8, default));
    }

    [Fact]
    public void Responses_open_reply_subjects_for_max_messages()
    {
        var c = For(new Permissions { Response = new ResponsePermission { MaxMsgs = 2, Expires = TimeSpan.FromMinutes(5) } });
        Assert.False(Pub(c, "_INBOX.1"));
        Assert.True(c.AllowDelivery("svc"u8, "_INBOX.1"u8));
        Assert.True(Pub(c, "_INBOX.1"));
        Assert.True(Pub(c, "_INBOX.1"));
        Assert.False(Pub(c, "_INBOX.1"));
        Assert.False(Pub(c, "_INBOX.2"));
    }

    [Fact]
    public void Expired_response_grant_is_refused()
    {
        var c = For(new Permissions { Response = new ResponsePermission { MaxMsgs = -1, Expires = TimeSpan.FromTicks(1) } });
        Assert.True(c.AllowDelivery("svc"u8, "r"u8));
        // Any measurable time exceeds one tick; spin until the clock has moved rather than sleeping.
        var start = System.Diagnostics.Stopwatch.GetTimestamp();
        while (System.Diagnostics.Stopwatch.GetElapsedTime(start) <= TimeSpan.FromTicks(1))
        {
        }
        Assert.False(Pub(c, "r"));
    }

    [Fact]
    public void Response_defaults_are_filled_in()
    {
        var p = CompiledPermissions.Normalize(new Permissions { Response = new ResponsePermission { MaxMsgs = 0, Expires = TimeSpan.Zero } });
        Assert.Equal(1, p.Response!.MaxMsgs);
        Assert.Equal(TimeSpan.FromMinutes(2), p.Response.Expires);
        Assert.NotNull(p.Publish!.Allow);
        Assert.Empty(p.Publish.Allow);
    }
}
