using System.Text;
using Nats.Server.LeafNodes;
using Nats.Server.Tests.Auth.Jwt;
using NATS.NKeys;

namespace Nats.Server.Tests.LeafNodes;

public sealed class LeafCredentialsTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("leaf-creds-").FullName;

    [Fact]
    public void CredsFileGivesItsJwtAndTheNonceSignedWithItsSeed()
    {
        var account = JwtMinter.NewKey(PrefixByte.Account);
        var user = JwtMinter.NewKey(PrefixByte.User);
        var jwt = JwtMinter.User(account, user.GetPublicKey());
        var path = Path.Combine(_dir, "user.creds");
        File.WriteAllText(path, JwtMinter.Creds(jwt, user));

        var (signedJwt, sig, error) = LeafCredentials.Sign(path, "nonce-123");

        Assert.Null(error);
        Assert.Equal(jwt, signedJwt);
        Assert.DoesNotContain('=', sig!);
        var raw = Convert.FromBase64String(sig!.Replace('-', '+').Replace('_', '/') + "==");
        Assert.True(Nats.Server.Auth.NKeys.Verify(user.GetPublicKey(), Encoding.ASCII.GetBytes("nonce-123"), raw));
    }

    [Fact]
    public void MissingAndMalformedFilesGiveGosErrors()
    {
        var missing = Path.Combine(_dir, "none.creds");
        Assert.Equal($"open {missing}: no such file or directory", LeafCredentials.Sign(missing, "n").Error);

        var malformed = Path.Combine(_dir, "bad.creds");
        File.WriteAllText(malformed, "not a creds file");
        Assert.Equal("Credentials file malformed", LeafCredentials.Sign(malformed, "n").Error);

        var badSeed = Path.Combine(_dir, "seed.creds");
        File.WriteAllText(badSeed, "-----BEGIN NATS USER JWT-----\nabc\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\nSUNOTASEED\n------END USER NKEY SEED------\n");
        Assert.Equal("Credentials file has malformed seed", LeafCredentials.Sign(badSeed, "n").Error);
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
