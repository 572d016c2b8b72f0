using System.Text;
using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Auth;

public sealed class OptionsAuthenticatorTests
{
    private static AuthenticatedUser? Auth(ServerOptions o, string connectJson, string? nonce = null)
    {
        var connect = new ConnectOptions();
        Assert.True(connect.TryApply(Encoding.UTF8.GetBytes(connectJson)));
        return new OptionsAuthenticator(o).Authenticate(new ClientAuthRequest(connect, nonce, "127.0.0.1"));
    }

    [Fact]
    public void No_auth_configured_accepts_anyone()
    {
        var o = new ServerOptions();
        Assert.False(new OptionsAuthenticator(o).AuthRequired);
        Assert.Same(AuthenticatedUser.Anonymous, Auth(o, "{\"user\":\"x\"}"));
    }

    [Fact]
    public void Empty_users_list_requires_auth_and_admits_nobody()
    {
        var o = new ServerOptions { Users = [] };
        Assert.True(new OptionsAuthenticator(o).AuthRequired);
        Assert.Null(Auth(o, "{}"));
        Assert.Null(Auth(o, "{\"user\":\"a\",\"pass\":\"b\"}"));
    }

    [Fact]
    public void Users_get_their_own_or_default_permissions()
    {
        var o = new ServerOptions
        {
            Users =
            [
                new User { Username = "a", Password = "pa" },
                new User { Username = "b", Password = "pb", Permissions = new Permissions { Publish = new SubjectPermission { Allow = ["b"] } } },
            ],
            DefaultPermissions = new Permissions { Publish = new SubjectPermission { Allow = ["default"] } },
        };
        var a = Auth(o, "{\"user\":\"a\",\"pass\":\"pa\"}");
        Assert.NotNull(a);
        Assert.Equal(AuthMethod.UserPassword, a.Method);
        Assert.Equal("$G", a.Account);
        Assert.True(new ClientPermissions(a.Permissions!).CanPublish("default"u8));
        var b = Auth(o, "{\"user\":\"b\",\"pass\":\"pb\"}");
        Assert.False(new ClientPermissions(b!.Permissions!).CanPublish("default"u8));
        Assert.Null(Auth(o, "{\"user\":\"b\",\"pass\":\"pa\"}"));
    }

    [Fact]
    public void No_auth_user_applies_only_without_credentials()
    {
        var o = new ServerOptions { Users = [new User { Username = "guest", Password = "g" }], NoAuthUser = "guest" };
        var auth = new OptionsAuthenticator(o);
        Assert.True(auth.AuthRequired);
        Assert.False(auth.AdvertiseAuthRequired);
        Assert.Equal("guest", Auth(o, "{}")!.Name);
        Assert.Null(Auth(o, "{\"auth_token\":\"x\"}"));
        Assert.Null(Auth(o, "{\"pass\":\"g\"}"));
    }

    [Fact]
    public void Bcrypt_no_auth_user_cannot_log_in_like_go()
    {
        var hash = BCrypt.Net.BCrypt.HashPassword("g", 4);
        var o = new ServerOptions { Users = [new User { Username = "guest", Password = hash }], NoAuthUser = "guest" };
        Assert.Null(Auth(o, "{}"));
        Assert.NotNull(Auth(o, "{\"user\":\"guest\",\"pass\":\"g\"}"));
    }

    [Fact]
    public void Token_and_single_user()
    {
        var token = new ServerOptions { AuthToken = "t" };
        Assert.Equal(AuthMethod.Token, Auth(token, "{\"auth_token\":\"t\"}")!.Method);
        Assert.Null(Auth(token, "{\"auth_token\":\"u\"}"));
        Assert.Null(Auth(token, "{\"user\":\"t\",\"pass\":\"t\"}"));

        var single = new ServerOptions { Username = "u", Password = "p" };
        Assert.NotNull(Auth(single, "{\"user\":\"u\",\"pass\":\"p\"}"));
        Assert.Null(Auth(single, "{\"user\":\"u\",\"pass\":\"q\"}"));
        Assert.Null(Auth(single, "{\"user\":\"v\",\"pass\":\"p\"}"));
    }

    [Fact]
    public void Nkey_user_signs_the_nonce()
    {
        var seed = Enumerable.Range(0, 32).Select(i => (byte)i).ToArray();
        using var pair = SeededKeyPair.Create(seed);
        var key = pair.GetPublicKey();
        var o = new ServerOptions { Nkeys = [new NkeyUser { Nkey = key }] };
        Assert.True(new OptionsAuthenticator(o).NonceRequired);
        const string nonce = "0123456789abcde";
        var sig = SeededKeyPair.SignNonce(pair, nonce);
        var user = Auth(o, $"{{\"nkey\":\"{key}\",\"sig\":\"{sig}\"}}", nonce);
        Assert.NotNull(user);
        Assert.Equal(AuthMethod.Nkey, user.Method);
        Assert.Equal($"Nkey \"{key}\"", user.Description);
        Assert.Null(Auth(o, $"{{\"nkey\":\"{key}\",\"sig\":\"{sig}\"}}", "another-nonce!!"));
        Assert.Null(Auth(o, $"{{\"nkey\":\"{key}\"}}", nonce));
    }
}
