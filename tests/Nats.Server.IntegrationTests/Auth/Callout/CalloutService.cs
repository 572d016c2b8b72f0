using System.Text;
using System.Text.Json.Nodes;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Callout;

/// <summary>
/// An auth callout service written with NATS.Net, as an application would: it logs in as an auth user,
/// answers $SYS.REQ.USER.AUTH, and decides by the connecting client's user name. "alice" and "carol" are
/// admitted into APP (publish only to greet.>); "bob" gets an error; "silent" gets no answer; the other
/// names get a response broken in the way they name.
/// </summary>
internal sealed class CalloutService : IAsyncDisposable
{
    private readonly NatsConnection _nats;
    private readonly KeyPair _issuer;
    private readonly KeyPair? _xkey;
    private readonly CancellationTokenSource _stop = new();
    private Task? _loop;

    public CalloutService(string url, KeyPair issuer, KeyPair? xkey)
    {
        _issuer = issuer;
        _xkey = xkey;
        _nats = new NatsConnection(new NatsOpts { Url = url, AuthOpts = new NatsAuthOpts { Username = "auth", Password = "pwd" } });
    }

    /// <summary>The last request's claims, decoded.</summary>
    public JsonObject? LastRequest { get; private set; }

    /// <summary>The last request as it came (after unsealing).</summary>
    public string? LastRequestToken { get; private set; }

    /// <summary>Whether the last request came sealed with the Nats-Server-Xkey header.</summary>
    public bool LastRequestSealed { get; private set; }

    public int Requests;

    public async Task StartAsync()
    {
        await _nats.ConnectAsync();
        var subscription = await _nats.SubscribeCoreAsync<byte[]>("$SYS.REQ.USER.AUTH");
        // The subscription is known to the server once the PING round trip is done.
        await _nats.PingAsync();
        _loop = Task.Run(async () =>
        {
            await using var _ = subscription;
            await foreach (var msg in subscription.Msgs.ReadAllAsync(_stop.Token))
            {
                await AnswerAsync(msg);
            }
        });
    }

    private async Task AnswerAsync(NatsMsg<byte[]> msg)
    {
        Interlocked.Increment(ref Requests);
        var payload = msg.Data ?? [];
        string? serverXkey = null;
        if (msg.Headers is { } headers && headers.TryGetValue("Nats-Server-Xkey", out var values))
        {
            serverXkey = values.ToString();
            payload = _xkey!.Open(payload, serverXkey);
        }
        LastRequestSealed = serverXkey is not null;
        LastRequestToken = Encoding.ASCII.GetString(payload);
        var request = Claims(LastRequestToken);
        LastRequest = request;
        var nats = request["nats"]!;
        var userNkey = nats["user_nkey"]!.GetValue<string>();
        var serverId = nats["server_id"]!["id"]!.GetValue<string>();
        var user = nats["connect_opts"]!["user"]?.GetValue<string>() ?? "";
        if (user == "silent")
        {
            return;
        }
        var response = user switch
        {
            "bob" => Response(_issuer, userNkey, serverId, error: "bob is not welcome"),
            "wrongissuer" => Response(_issuer, userNkey, serverId, jwt: UserJwt(JwtMinter.NewKey(PrefixByte.Account), userNkey)),
            "badsig" => Tamper(Response(_issuer, userNkey, serverId, jwt: UserJwt(_issuer, userNkey))),
            "wrongaud" => Response(_issuer, userNkey, JwtMinter.NewKey(PrefixByte.Server).GetPublicKey(), jwt: UserJwt(_issuer, userNkey)),
            "wronguser" => Response(_issuer, JwtMinter.NewKey(PrefixByte.User).GetPublicKey(), serverId, jwt: UserJwt(_issuer, userNkey)),
            "expired" => Response(_issuer, userNkey, serverId, jwt: UserJwt(_issuer, userNkey), expires: DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 10),
            "userkey" => Response(_issuer, userNkey, serverId, jwt: UserJwt(_issuer, JwtMinter.NewKey(PrefixByte.User).GetPublicKey())),
            "noaccount" => Response(_issuer, userNkey, serverId, jwt: UserJwt(_issuer, userNkey, account: "NOPE")),
            _ => Response(_issuer, userNkey, serverId, jwt: UserJwt(_issuer, userNkey)),
        };
        var bytes = Encoding.ASCII.GetBytes(response);
        if (serverXkey is not null)
        {
            bytes = _xkey!.Seal(bytes, serverXkey);
        }
        await msg.ReplyAsync(bytes);
    }

    /// <summary>A user JWT placing the client in <paramref name="account"/> (the audience, outside operator mode).</summary>
    private static string UserJwt(KeyPair issuer, string userNkey, string account = "APP") =>
        JwtMinter.User(issuer, userNkey, n =>
        {
            n["pub"] = new JsonObject { ["allow"] = new JsonArray("greet.>", "_INBOX.>") };
        }, t => t["aud"] = account);

    private static string Response(KeyPair issuer, string userNkey, string serverId, string? jwt = null, string? error = null, long? expires = null) =>
        JwtMinter.Encode(issuer, userNkey, "authorization_response", n =>
        {
            if (jwt is not null)
            {
                n["jwt"] = jwt;
            }
            if (error is not null)
            {
                n["error"] = error;
            }
        }, t =>
        {
            t["aud"] = serverId;
            if (expires is { } e)
            {
                t["exp"] = e;
            }
        });

    /// <summary>The same claims with a signature that does not match them.</summary>
    private static string Tamper(string jwt)
    {
        var parts = jwt.Split('.');
        var signature = Convert.FromBase64String(B64Pad(parts[2]));
        signature[0] ^= 1;
        return parts[0] + "." + parts[1] + "." + JwtMinter.B64(signature);
    }

    private static JsonObject Claims(string jwt) =>
        JsonNode.Parse(Convert.FromBase64String(B64Pad(jwt.Split('.')[1])))!.AsObject();

    private static string B64Pad(string s)
    {
        s = s.Replace('-', '+').Replace('_', '/');
        return s + new string('=', (4 - s.Length % 4) % 4);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        if (_loop is not null)
        {
            try
            {
                await _loop;
            }
            catch (OperationCanceledException)
            {
                // Stopped.
            }
        }
        await _nats.DisposeAsync();
        _stop.Dispose();
    }
}
