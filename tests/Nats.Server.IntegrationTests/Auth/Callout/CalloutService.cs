using System.Text;
using System.Text.Json.Nodes;
using Nats.Server.Tests.Auth.Jwt;
using NATS.Client.Core;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Callout;

/// <summary>
/// An auth callout service written with NATS.Net, as an application would: it logs in as an auth user
/// (user and password in server configuration mode, the account's service creds in operator mode),
/// answers $SYS.REQ.USER.AUTH, opens sealed requests with its xkey and seals its answers back to the
/// server's, and lets the test decide each answer from the request (null: no answer).
/// </summary>
internal sealed class CalloutService : IAsyncDisposable
{
    private readonly NatsConnection _nats;
    private readonly KeyPair? _xkey;
    private readonly Func<CalloutRequest, string?> _decide;
    private readonly CancellationTokenSource _stop = new();
    private Task? _loop;

    public CalloutService(string url, NatsAuthOpts auth, KeyPair? xkey, Func<CalloutRequest, string?> decide)
    {
        _xkey = xkey;
        _decide = decide;
        _nats = new NatsConnection(new NatsOpts { Url = url, AuthOpts = auth, MaxReconnectRetry = 0 });
    }

    public NatsConnection Connection => _nats;

    /// <summary>The requests seen so far, in order.</summary>
    public List<CalloutRequest> Requests { get; } = [];

    /// <summary>The last request (tests read it once their client is in).</summary>
    public CalloutRequest LastRequest
    {
        get
        {
            lock (Requests)
            {
                return Requests[^1];
            }
        }
    }

    public int RequestCount
    {
        get
        {
            lock (Requests)
            {
                return Requests.Count;
            }
        }
    }

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
        var payload = msg.Data ?? [];
        string? serverXkey = null;
        if (msg.Headers is { } headers && headers.TryGetValue("Nats-Server-Xkey", out var values))
        {
            serverXkey = values.ToString();
            payload = _xkey!.Open(payload, serverXkey);
        }
        var token = Encoding.ASCII.GetString(payload);
        var request = new CalloutRequest(token, Claims(token), serverXkey);
        lock (Requests)
        {
            Requests.Add(request);
        }
        if (_decide(request) is not { } response)
        {
            return;
        }
        var bytes = Encoding.ASCII.GetBytes(response);
        if (serverXkey is not null && request.SealAnswer)
        {
            bytes = _xkey!.Seal(bytes, serverXkey);
        }
        await msg.ReplyAsync(bytes);
    }

    /// <summary>An authorization response for the request, signed by <paramref name="signer"/>.</summary>
    public static string Response(KeyPair signer, CalloutRequest request, string? jwt = null, string? error = null, string? issuerAccount = null) =>
        Response(signer, request.UserNkey, request.ServerId, jwt, error, issuerAccount);

    /// <summary>An authorization response for any user and server (tests also send them to the wrong ones).</summary>
    public static string Response(KeyPair signer, string userNkey, string serverId, string? jwt = null, string? error = null, string? issuerAccount = null, long? expires = null) =>
        JwtMinter.Encode(signer, userNkey, "authorization_response", n =>
        {
            if (jwt is not null)
            {
                n["jwt"] = jwt;
            }
            if (error is not null)
            {
                n["error"] = error;
            }
            if (issuerAccount is not null)
            {
                n["issuer_account"] = issuerAccount;
            }
        }, t =>
        {
            t["aud"] = serverId;
            if (expires is { } e)
            {
                t["exp"] = e;
            }
        });

    private static JsonObject Claims(string jwt) =>
        JsonNode.Parse(Convert.FromBase64String(B64Pad(jwt.Split('.')[1])))!.AsObject();

    public static string B64Pad(string s)
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

/// <summary>One authorization request as the service saw it (after unsealing).</summary>
internal sealed record CalloutRequest(string Token, JsonObject Claims, string? ServerXkey)
{
    public string UserNkey => Claims["nats"]!["user_nkey"]!.GetValue<string>();

    public string ServerId => Claims["nats"]!["server_id"]!["id"]!.GetValue<string>();

    public string ClientToken => Claims["nats"]!["connect_opts"]!["auth_token"]?.GetValue<string>() ?? "";

    public string ClientUser => Claims["nats"]!["connect_opts"]!["user"]?.GetValue<string>() ?? "";

    /// <summary>Whether a sealed request gets a sealed answer (Go accepts both).</summary>
    public bool SealAnswer { get; set; } = true;
}
