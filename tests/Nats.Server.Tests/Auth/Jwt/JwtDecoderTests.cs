using Nats.Server.Auth.Jwt;
using NATS.NKeys;

namespace Nats.Server.Tests.Auth.Jwt;

public sealed class JwtDecoderTests
{
    private static readonly KeyPair Op = JwtMinter.NewKey(PrefixByte.Operator);
    private static readonly KeyPair Acc = JwtMinter.NewKey(PrefixByte.Account);
    private static readonly KeyPair User = JwtMinter.NewKey(PrefixByte.User);

    [Fact]
    public void Decodes_the_chain_of_claims()
    {
        var op = JwtDecoder.DecodeOperator(JwtMinter.Operator(Op, n => n["system_account"] = Acc.GetPublicKey()));
        Assert.Equal(Op.GetPublicKey(), op.Subject);
        Assert.Equal(Acc.GetPublicKey(), op.Nats.SystemAccount);

        var acc = JwtDecoder.DecodeAccount(JwtMinter.Account(Op, Acc.GetPublicKey(), n => n["signing_keys"] = new System.Text.Json.Nodes.JsonArray(
            "AAAA", new System.Text.Json.Nodes.JsonObject { ["kind"] = "user_scope", ["key"] = "ABCD", ["template"] = new System.Text.Json.Nodes.JsonObject { ["pub"] = new System.Text.Json.Nodes.JsonObject { ["allow"] = new System.Text.Json.Nodes.JsonArray("x") } } })));
        Assert.Equal(Op.GetPublicKey(), acc.Issuer);
        Assert.Equal(-1, acc.Nats.Limits.Conn);
        Assert.Null(acc.Nats.SigningKeys["AAAA"]);
        Assert.Equal(["x"], acc.Nats.SigningKeys["ABCD"]!.Template.Pub!.Allow!);
        Assert.Equal(-1, acc.Nats.SigningKeys["ABCD"]!.Template.Subs);

        var user = JwtDecoder.DecodeUser(JwtMinter.User(Acc, User.GetPublicKey(), n => n["src"] = "127.0.0.1/32, 10.0.0.0/8"));
        Assert.Equal(User.GetPublicKey(), user.Subject);
        Assert.Equal(Acc.GetPublicKey(), user.AccountKey);
        Assert.Equal(["127.0.0.1/32", "10.0.0.0/8"], user.Nats.Src!);
    }

    [Theory]
    [InlineData("a.b", "expected 3 chunks")]
    [InlineData("eyJ0eXAiOiJYIiwiYWxnIjoiZWQyNTUxOS1ua2V5In0.e30.AA", "not supported type \"X\"")]
    [InlineData("eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.e30.AA", "unexpected \"RS256\" algorithm")]
    public void Malformed_tokens_fail_with_the_library_text(string token, string error) =>
        Assert.Equal(error, Assert.Throws<JwtException>(() => JwtDecoder.Decode(token)).Message);

    [Fact]
    public void Tampered_payload_or_wrong_signer_fails_verification()
    {
        var token = JwtMinter.User(Acc, User.GetPublicKey());
        var parts = token.Split('.');
        var forged = JwtMinter.Sign(JwtMinter.NewKey(PrefixByte.Account), JwtMinter.Header,
            System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(Pad(parts[1]))));
        Assert.Equal("claim failed V2 signature verification", Assert.Throws<JwtException>(() => JwtDecoder.Decode(forged)).Message);
    }

    [Fact]
    public void User_signed_by_an_operator_key_has_the_wrong_prefix()
    {
        var token = JwtMinter.User(Op, User.GetPublicKey());
        Assert.Equal("unable to validate expected prefixes - [account]", Assert.Throws<JwtException>(() => JwtDecoder.Decode(token)).Message);
        Assert.Equal("not account claim", Assert.Throws<JwtException>(() => JwtDecoder.DecodeAccount(JwtMinter.User(Acc, User.GetPublicKey()))).Message);
    }

    [Fact]
    public void Expired_and_not_yet_valid_claims_are_time_checks()
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var expired = JwtDecoder.DecodeUser(JwtMinter.User(Acc, User.GetPublicKey(), top: t => t["exp"] = now - 10));
        var result = new JwtValidation();
        expired.Validate(result, now);
        Assert.True(result.IsBlocking(true));
        Assert.False(result.IsBlocking(false));
        var early = JwtDecoder.DecodeUser(JwtMinter.User(Acc, User.GetPublicKey(), top: t => t["nbf"] = now + 100));
        result = new JwtValidation();
        early.Validate(result, now);
        Assert.Equal("claim is not yet valid", Assert.Single(result.Issues).Description);
    }

    [Fact]
    public void Decorated_files_yield_the_first_block()
    {
        var token = JwtMinter.User(Acc, User.GetPublicKey());
        Assert.Equal(token, JwtDecoder.ParseDecorated(JwtMinter.Creds(token, User)));
        Assert.Equal(token, JwtDecoder.ParseDecorated(token));
    }

    private static string Pad(string s)
    {
        s = s.Replace('-', '+').Replace('_', '/');
        return s + new string('=', (4 - s.Length % 4) % 4);
    }
}
