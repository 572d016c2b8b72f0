using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Infrastructure;
using Nats.Server.Tests.Auth.Jwt;
using NATS.NKeys;

namespace Nats.Server.IntegrationTests.Auth.Jwt;

/// <summary>
/// A freshly generated operator with its system account and one application account, and the
/// configuration (inline operator JWT, MEMORY resolver with preloads) both servers get.
/// </summary>
internal sealed class OperatorFixture
{
    public KeyPair Operator { get; } = JwtMinter.NewKey(PrefixByte.Operator);
    public KeyPair System { get; } = JwtMinter.NewKey(PrefixByte.Account);
    public KeyPair Account { get; } = JwtMinter.NewKey(PrefixByte.Account);

    /// <summary>Account JWTs by account key; tests may add or replace before building settings.</summary>
    public Dictionary<string, string> Accounts { get; } = [];

    public OperatorFixture(Action<JsonObject>? account = null)
    {
        Accounts[System.GetPublicKey()] = JwtMinter.Account(Operator, System.GetPublicKey());
        Accounts[Account.GetPublicKey()] = JwtMinter.Account(Operator, Account.GetPublicKey(), account);
    }

    private string? _operatorJwt;

    /// <summary>Minted once, so that every configuration built from the fixture names the same operator JWT.</summary>
    public string OperatorJwt => _operatorJwt ??= JwtMinter.Operator(Operator, n => n["system_account"] = System.GetPublicKey());

    public ServerSettings Settings(params string[] extra) => Settings("resolver: MEMORY", extra);

    /// <summary>With a full (directory) resolver in <paramref name="dir"/>.</summary>
    public ServerSettings FullResolverSettings(string dir, bool allowDelete = false) =>
        Settings($"resolver: {{ type: full, dir: \"{dir}\", allow_delete: {(allowDelete ? "true" : "false")} }}", []);

    private ServerSettings Settings(string resolver, string[] extra)
    {
        var settings = new ServerSettings { AuthTimeoutSeconds = ServerSettings.GenerousAuthTimeoutSeconds };
        settings.RawConfig.Add($"operator: \"{OperatorJwt}\"");
        settings.RawConfig.Add(resolver);
        settings.RawConfig.Add("resolver_preload: {");
        foreach (var (key, jwt) in Accounts)
        {
            settings.RawConfig.Add($"  {key}: \"{jwt}\"");
        }
        settings.RawConfig.Add("}");
        settings.RawConfig.AddRange(extra);
        return settings;
    }

    /// <summary>A user of <see cref="Account"/> signed by the account key.</summary>
    public (KeyPair Key, string Jwt) User(Action<JsonObject>? nats = null, Action<JsonObject>? top = null, KeyPair? signer = null)
    {
        var key = JwtMinter.NewKey(PrefixByte.User);
        return (key, JwtMinter.User(signer ?? Account, key.GetPublicKey(), nats, top));
    }

    public static string Connect(string jwt, KeyPair? key, string nonce, string extra = "") =>
        key is null
            ? $"{{\"verbose\":true,\"jwt\":\"{jwt}\"{extra}}}"
            : $"{{\"verbose\":true,\"jwt\":\"{jwt}\",\"sig\":\"{Nats.Server.Tests.Auth.SeededKeyPair.SignNonce(key, nonce)}\"{extra}}}";
}
