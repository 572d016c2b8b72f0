using System.Text;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Auth;

public sealed class ConnectionAuthTests
{
    private static ConnectOptions Connect(string json)
    {
        var connect = new ConnectOptions();
        Assert.True(connect.TryApply(Encoding.UTF8.GetBytes(json)));
        return connect;
    }

    private static ServerOptions Options() => new()
    {
        Users =
        [
            new User { Username = "free", Password = "f" },
            new User
            {
                Username = "limited", Password = "l", Account = "A",
                Permissions = new Permissions
                {
                    Publish = new SubjectPermission { Allow = ["pub.>"] },
                    Subscribe = new SubjectPermission { Allow = ["sub.>"] },
                },
            },
        ],
    };

    private static ConnectionAuth Authenticated(ServerOptions options, ConnectOptions connect)
    {
        var auth = new ConnectionAuth(NullLogger.Instance, "client");
        Assert.True(auth.Authenticate(new OptionsAuthenticator(options), new ClientAuthRequest(connect, null, "127.0.0.1"), options));
        return auth;
    }

    [Fact]
    public void Authenticate_RecordsTheUser_AndAnUnrestrictedUserHasNoPermissionsObject()
    {
        var auth = Authenticated(Options(), Connect("{\"user\":\"free\",\"pass\":\"f\"}"));
        Assert.Equal("free", auth.User!.Name);
        Assert.Null(auth.Permissions);
        Assert.Null(auth.PublishViolation("anything"u8));
        Assert.Null(auth.SubscribeViolation("anything"u8, default, false, "1"u8));
    }

    [Fact]
    public void Authenticate_Fails_WithBadCredentials_AndKeepsNoUser()
    {
        var options = Options();
        var auth = new ConnectionAuth(NullLogger.Instance, "client");
        var request = new ClientAuthRequest(Connect("{\"user\":\"free\",\"pass\":\"wrong\"}"), null, "127.0.0.1");
        Assert.False(auth.Authenticate(new OptionsAuthenticator(options), request, options));
        Assert.Null(auth.User);
    }

    [Fact]
    public void Violations_AreGoErrLines()
    {
        var auth = Authenticated(Options(), Connect("{\"user\":\"limited\",\"pass\":\"l\"}"));
        Assert.Null(auth.PublishViolation("pub.x"u8));
        Assert.Equal("-ERR 'Permissions Violation for Publish to \"other\"'\r\n", Encoding.UTF8.GetString(auth.PublishViolation("other"u8)!));
        Assert.Null(auth.SubscribeViolation("sub.x"u8, default, false, "1"u8));
        Assert.Equal("-ERR 'Permissions Violation for Subscription to \"other\"'\r\n",
            Encoding.UTF8.GetString(auth.SubscribeViolation("other"u8, default, false, "1"u8)!));
        Assert.Equal("-ERR 'Permissions Violation for Subscription to \"other\" using queue \"q\"'\r\n",
            Encoding.UTF8.GetString(auth.SubscribeViolation("other"u8, "q"u8, true, "1"u8)!));
    }

    [Fact]
    public void NoAuthUser_IsWrittenIntoTheConnectOptions()
    {
        var options = Options();
        options.NoAuthUser = "free";
        var connect = Connect("{}");
        Authenticated(options, connect);
        Assert.Equal("free", connect.User);
        Assert.Equal("f", connect.Pass);
        Assert.Equal("free", ConnectionAuth.RawAuthUser(connect));
    }

    [Fact]
    public void Reauthenticate_ReplacesPermissions_OrFails()
    {
        var connect = Connect("{\"user\":\"limited\",\"pass\":\"l\"}");
        var auth = Authenticated(Options(), connect);
        var existing = new Subscription(null!, "sub.a"u8.ToArray(), null, "1"u8.ToArray());
        Assert.Null(auth.ExistingSubscriptionViolation(existing, out _, out _));

        var reloaded = Options();
        reloaded.Users![1].Permissions!.Subscribe = new SubjectPermission { Allow = ["other.>"] };
        Assert.True(auth.Reauthenticate(new OptionsAuthenticator(reloaded), connect, "127.0.0.1", reloaded));
        var violation = auth.ExistingSubscriptionViolation(existing, out var quotedSubject, out var quotedSid);
        Assert.Equal("-ERR 'Permissions Violation for Subscription to \"sub.a\" (sid \"1\")'\r\n", Encoding.UTF8.GetString(violation!));
        Assert.Equal("\"sub.a\"", quotedSubject);
        Assert.Equal("\"1\"", quotedSid);

        var gone = new ServerOptions { Users = [new User { Username = "free", Password = "f" }] };
        Assert.False(auth.Reauthenticate(new OptionsAuthenticator(gone), connect, "127.0.0.1", gone));
    }

    [Fact]
    public void HasMovedToDifferentAccount_FollowsTheUsersEntry()
    {
        var connect = Connect("{\"user\":\"limited\",\"pass\":\"l\"}");
        var auth = Authenticated(Options(), connect);
        Assert.False(auth.HasMovedToDifferentAccount(connect, Options()));

        var moved = Options();
        moved.Users![1].Account = "B";
        Assert.True(auth.HasMovedToDifferentAccount(connect, moved));
        Assert.True(auth.HasMovedToDifferentAccount(connect, new ServerOptions { Users = [] }));
        Assert.False(auth.HasMovedToDifferentAccount(Connect("{}"), moved));
    }
}
