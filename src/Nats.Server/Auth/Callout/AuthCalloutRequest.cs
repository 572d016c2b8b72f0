using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Nats.Server.Auth.Jwt;
using Nats.Server.Protocol;
using NATS.NKeys;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// The authorization request JWT (jwt v2 AuthorizationRequestClaims) the server signs with its own
/// nkey: subject the callout issuer, audience "nats-authorization-request", the user nkey the response
/// must name, the server, the client and its CONNECT options, expiring after the auth timeout.
/// </summary>
internal static class AuthCalloutRequest
{
    public const string Audience = "nats-authorization-request";

    public sealed record ServerIdentity(string Name, string Host, string Id, string Version, string? XKey);

    public sealed record ClientIdentity(string Host, ulong Id, string User, string Kind, string Type);

    public static string Encode(KeyPair serverKey, string subject, string userNkey, ServerIdentity server, ClientIdentity client,
        ConnectOptions connect, string? nonce, TimeSpan timeout)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var buffer = new ArrayBufferWriter<byte>(1024);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("aud", Audience);
            json.WriteNumber("exp", DateTimeOffset.UtcNow.Add(timeout).ToUnixTimeSeconds());
            json.WriteString("jti", NewJti());
            json.WriteNumber("iat", now);
            json.WriteString("iss", serverKey.GetPublicKey());
            json.WriteString("sub", subject);
            json.WriteStartObject("nats");
            json.WriteStartObject("server_id");
            json.WriteString("name", server.Name);
            json.WriteString("host", server.Host);
            json.WriteString("id", server.Id);
            json.WriteString("version", server.Version);
            if (server.XKey is not null)
            {
                json.WriteString("xkey", server.XKey);
            }
            json.WriteEndObject();
            json.WriteString("user_nkey", userNkey);
            json.WriteStartObject("client_info");
            WriteIfSet(json, "host", client.Host);
            json.WriteNumber("id", client.Id);
            WriteIfSet(json, "user", client.User);
            WriteIfSet(json, "name", connect.Name);
            WriteIfSet(json, "kind", client.Kind);
            WriteIfSet(json, "type", client.Type);
            // Go fills the nonce in only when the client signed one.
            if (!string.IsNullOrEmpty(connect.Sig))
            {
                WriteIfSet(json, "nonce", nonce);
            }
            json.WriteEndObject();
            json.WriteStartObject("connect_opts");
            WriteIfSet(json, "jwt", connect.Jwt);
            WriteIfSet(json, "nkey", connect.Nkey);
            WriteIfSet(json, "sig", connect.Sig);
            WriteIfSet(json, "auth_token", connect.AuthToken);
            WriteIfSet(json, "user", connect.User);
            WriteIfSet(json, "pass", connect.Pass);
            WriteIfSet(json, "name", connect.Name);
            WriteIfSet(json, "lang", connect.Lang);
            WriteIfSet(json, "version", connect.Version);
            json.WriteNumber("protocol", connect.Protocol);
            json.WriteEndObject();
            json.WriteString("type", "authorization_request");
            json.WriteNumber("version", 2);
            json.WriteEndObject();
            json.WriteEndObject();
        }
        var header = Base64Url(Encoding.UTF8.GetBytes(JwtHeader));
        var signed = header + "." + Base64Url(buffer.WrittenSpan);
        var signature = new byte[64];
        serverKey.Sign(Encoding.ASCII.GetBytes(signed), signature);
        return signed + "." + Base64Url(signature);
    }

    private const string JwtHeader = "{\"typ\":\"JWT\",\"alg\":\"ed25519-nkey\"}";

    private static void WriteIfSet(Utf8JsonWriter json, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            json.WriteString(name, value);
        }
    }

    private static string Base64Url(ReadOnlySpan<byte> bytes) => Convert.ToBase64String(bytes).TrimEnd('=').Replace('+', '-').Replace('/', '_');

    private static string NewJti()
    {
        Span<byte> bytes = stackalloc byte[32];
        RandomNumberGenerator.Fill(bytes);
        Span<char> chars = stackalloc char[Base32.GetEncodedLength(bytes)];
        Base32.ToBase32(bytes, chars);
        return new string(chars).TrimEnd('=');
    }
}
