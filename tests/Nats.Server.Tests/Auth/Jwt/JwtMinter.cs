using System.Security.Cryptography;
using System.Text;
using System.Text.Json.Nodes;
using NATS.NKeys;

namespace Nats.Server.Tests.Auth.Jwt;

/// <summary>
/// Test-side JWT encoder in nats-io/jwt v2's shape (header, base64url claims with "nats" section,
/// ed25519 signature of "header.payload" by the issuer seed). Claims are plain JSON so tests can also
/// mint what the library would refuse to.
/// </summary>
internal static class JwtMinter
{
    public const string Header = "{\"typ\":\"JWT\",\"alg\":\"ed25519-nkey\"}";

    public static KeyPair NewKey(PrefixByte prefix) => KeyPair.CreatePair(prefix);

    public static string Operator(KeyPair op, Action<JsonObject>? nats = null, Action<JsonObject>? top = null) =>
        Encode(op, op.GetPublicKey(), "operator", nats, top);

    public static string Account(KeyPair signer, string accountKey, Action<JsonObject>? nats = null, Action<JsonObject>? top = null) =>
        Encode(signer, accountKey, "account", n =>
        {
            // nsc's defaults: every limit off (-1), JetStream disabled.
            n["limits"] = new JsonObject { ["subs"] = -1, ["data"] = -1, ["payload"] = -1, ["imports"] = -1, ["exports"] = -1, ["wildcards"] = true, ["conn"] = -1, ["leaf"] = -1 };
            nats?.Invoke(n);
        }, top);

    public static string User(KeyPair signer, string userKey, Action<JsonObject>? nats = null, Action<JsonObject>? top = null) =>
        Encode(signer, userKey, "user", n =>
        {
            n["pub"] = new JsonObject();
            n["sub"] = new JsonObject();
            n["subs"] = -1;
            n["data"] = -1;
            n["payload"] = -1;
            nats?.Invoke(n);
        }, top);

    public static string Activation(KeyPair signer, string importerKey, string subject, string kind, Action<JsonObject>? nats = null) =>
        Encode(signer, importerKey, "activation", n =>
        {
            n["subject"] = subject;
            n["kind"] = kind;
            nats?.Invoke(n);
        }, null);

    public static string Encode(KeyPair signer, string subject, string type, Action<JsonObject>? nats, Action<JsonObject>? top)
    {
        var section = new JsonObject();
        nats?.Invoke(section);
        section["type"] ??= type;
        section["version"] ??= 2;
        var claims = new JsonObject
        {
            ["jti"] = NewJti(),
            ["iat"] = DateTimeOffset.UtcNow.ToUnixTimeSeconds(),
            ["iss"] = signer.GetPublicKey(),
            ["name"] = type + "-" + subject[..6],
            ["sub"] = subject,
            ["nats"] = section,
        };
        top?.Invoke(claims);
        return Sign(signer, Header, claims.ToJsonString());
    }

    /// <summary>Signs arbitrary header and payload text: for malformed-JWT tests.</summary>
    public static string Sign(KeyPair signer, string header, string payload)
    {
        var toSign = B64(Encoding.UTF8.GetBytes(header)) + "." + B64(Encoding.UTF8.GetBytes(payload));
        var signature = new byte[64];
        signer.Sign(Encoding.ASCII.GetBytes(toSign), signature);
        return toSign + "." + B64(signature);
    }

    /// <summary>A creds file as nsc writes it.</summary>
    public static string Creds(string jwt, KeyPair user) =>
        $"-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n"
        + "************************* IMPORTANT *************************\n"
        + "NKEY Seed printed below can be used to sign and prove identity.\n"
        + "NKEYs are sensitive and should be treated as secrets.\n\n"
        + $"-----BEGIN USER NKEY SEED-----\n{user.GetSeed()}\n------END USER NKEY SEED------\n\n"
        + "*************************************************************\n";

    public static string B64(byte[] bytes) => Convert.ToBase64String(bytes).TrimEnd('=').Replace('+', '-').Replace('/', '_');

    private static string NewJti()
    {
        Span<byte> bytes = stackalloc byte[32];
        RandomNumberGenerator.Fill(bytes);
        Span<char> chars = stackalloc char[Base32.GetEncodedLength(bytes)];
        Base32.ToBase32(bytes, chars);
        return new string(chars).TrimEnd('=');
    }
}
