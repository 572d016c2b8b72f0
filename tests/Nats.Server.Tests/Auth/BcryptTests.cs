using Nats.Server.Auth;

namespace Nats.Server.Tests.Auth;

/// <summary>Known vectors produced by libxcrypt's bcrypt (Python crypt module), checked through BCrypt.Net-Next.</summary>
public sealed class BcryptTests
{
    [Theory]
    [InlineData("password", "$2b$04$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("s3cr3t", "$2b$05$GKN1SW1VHgngjxkNwG2XVue.ISfXHiczGWlSTWIZsSegoxucwNRji")]
    [InlineData("", "$2b$04$ZR1.1bXEwxcAXJ2WmFyD7emeFN2nA8WZ7DHTMQrn4yGY.IJ3FOi4a")]
    [InlineData("ünïcode pass", "$2b$06$4WA.1CW4VzKwvK93IUwvrumugpX/k.rzqMQ55/xtYvxQ48e1MNW82")]
    // $2a$ and $2b$ differ only for passwords over 255 bytes, so the same digest verifies under both.
    [InlineData("password", "$2a$04$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    public void Verifies_known_hashes(string password, string hash)
    {
        Assert.True(Bcrypt.IsBcryptHash(hash));
        Assert.True(Bcrypt.Verify(password, hash));
        Assert.False(Bcrypt.Verify(password + "x", hash));
    }

    [Fact]
    public void Only_the_first_72_bytes_count()
    {
        const string hash = "$2b$04$abcdefghijklmnopqrstuubzadhGtS2zEF.gu0yd0opP6cVzb.e0i";
        Assert.True(Bcrypt.Verify(new string('x', 72), hash));
        Assert.True(Bcrypt.Verify(new string('x', 80), hash));
        Assert.False(Bcrypt.Verify(new string('x', 71), hash));
    }

    [Fact]
    public void Hashes_from_the_package_verify_under_every_minor_version_like_go()
    {
        // x/crypto/bcrypt reads the minor version but computes the same digest for all of them.
        var hash = BCrypt.Net.BCrypt.HashPassword("pw", 4);
        Assert.Equal(60, hash.Length);
        Assert.NotEqual(hash, BCrypt.Net.BCrypt.HashPassword("pw", 4));
        foreach (var minor in "abxy")
        {
            var variant = $"$2{minor}{hash[3..]}";
            Assert.True(Bcrypt.IsBcryptHash(variant));
            Assert.True(Bcrypt.Verify("pw", variant));
            Assert.False(Bcrypt.Verify("pW", variant));
        }
    }

    [Theory]
    [InlineData("$2b$04$short")]
    [InlineData("$3a$04$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("$2b$03$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("$2b$04$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxCextra")]
    [InlineData("$2b$32$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("$2b$04$h8hLy0gT4ObBBadYQE5F!eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("")]
    public void Malformed_hashes_never_verify(string hash) => Assert.False(Bcrypt.Verify("password", hash));

    [Theory]
    [InlineData("$2a$10$abc", true)]
    [InlineData("$2y$11$abc", true)]
    [InlineData("$2c$10$abc", false)]
    [InlineData("$2a$1$abc", false)]
    [InlineData("password", false)]
    public void Recognises_bcrypt_like_go(string value, bool expected) => Assert.Equal(expected, Bcrypt.IsBcryptHash(value));
}
