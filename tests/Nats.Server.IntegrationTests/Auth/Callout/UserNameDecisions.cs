using System.Text.Json.Nodes;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Callout;

/// <summary>
/// A server-configuration-mode callout service's policy, by the connecting client's user name: "alice"
/// and "carol" (and any other name) are admitted into APP (publish only to greet.>); "bob" gets an error;
/// "silent" gets no answer; the other names below get a response broken in the way they name.
/// </summary>
internal static class UserNameDecisions
{
    public static CalloutService Service(string url, KeyPair issuer, KeyPair? xkey) =>
        new(url, new NatsAuthOpts { Username = "auth", Password = "pwd" }, xkey, r => Decide(issuer, r));

    private static string? Decide(KeyPair issuer, CalloutRequest r)
    {
        var (userNkey, serverId) = (r.UserNkey, r.ServerId);
        return r.ClientUser switch
        {
            "silent" => null,
            "bob" => CalloutService.Response(issuer, userNkey, serverId, error: "bob is not welcome"),
            "wrongissuer" => CalloutService.Response(issuer, userNkey, serverId, jwt: UserJwt(JwtMinter.NewKey(PrefixByte.Account), userNkey)),
            "badsig" => Tamper(CalloutService.Response(issuer, userNkey, serverId, jwt: UserJwt(issuer, userNkey))),
            "wrongaud" => CalloutService.Response(issuer, userNkey, JwtMinter.NewKey(PrefixByte.Server).GetPublicKey(), jwt: UserJwt(issuer, userNkey)),
            "wronguser" => CalloutService.Response(issuer, JwtMinter.NewKey(PrefixByte.User).GetPublicKey(), serverId, jwt: UserJwt(issuer, userNkey)),
            "expired" => CalloutService.Response(issuer, userNkey, serverId, jwt: UserJwt(issuer, userNkey), expires: DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 10),
            "userkey" => CalloutService.Response(issuer, userNkey, serverId, jwt: UserJwt(issuer, JwtMinter.NewKey(PrefixByte.User).GetPublicKey())),
            "noaccount" => CalloutService.Response(issuer, userNkey, serverId, jwt: UserJwt(issuer, userNkey, account: "NOPE")),
            _ => CalloutService.Response(issuer, userNkey, serverId, jwt: UserJwt(issuer, userNkey)),
        };
    }

    /// <summary>A user JWT placing the client in <paramref name="account"/> (the audience, outside operator mode); <paramref name="name"/> "" leaves the name out.</summary>
    public static string UserJwt(KeyPair issuer, string userNkey, string account = "APP", string? name = null) =>
        JwtMinter.User(issuer, userNkey, n =>
        {
            n["pub"] = new JsonObject { ["allow"] = new JsonArray("greet.>", "_INBOX.>") };
        }, t =>
        {
            t["aud"] = account;
            if (name is "")
            {
                t.Remove("name");
            }
            else if (name is not null)
            {
                t["name"] = name;
            }
        });

    /// <summary>The same claims with a signature that does not match them.</summary>
    private static string Tamper(string jwt)
    {
        var parts = jwt.Split('.');
        var signature = Convert.FromBase64String(CalloutService.B64Pad(parts[2]));
        signature[0] ^= 1;
        return parts[0] + "." + parts[1] + "." + JwtMinter.B64(signature);
    }
}
