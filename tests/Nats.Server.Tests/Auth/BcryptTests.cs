using Nats.Server.Auth;

namespace Nats.Server.Tests.Auth;

/// <summary>Known vectors produced by libxcrypt's bcrypt (Python crypt module) on this machine.</summary>
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
    public void Hash_round_trips_and_is_salt_dependent()
    {
        var salt = Enumerable.Range(1, 16).Select(i => (byte)i).ToArray();
        var hash = Bcrypt.Hash("pw", 4, salt);
        Assert.StartsWith("$2a$04$", hash);
        Assert.Equal(60, hash.Length);
        Assert.True(Bcrypt.Verify("pw", hash));
        salt[0] = 99;
        Assert.NotEqual(hash, Bcrypt.Hash("pw", 4, salt));
    }

    [Theory]
    [InlineData("$2b$04$short")]
    [InlineData("$3a$04$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("$2b$03$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxC")]
    [InlineData("$2b$04$h8hLy0gT4ObBBadYQE5F.eTAX8WglvH5LQyeptZJPZS.QCeDHmSxCextra")]
    public void Malformed_hashes_never_verify(string hash) => Assert.False(Bcrypt.Verify("password", hash));

    [Theory]
    [InlineData("$2a$10$abc", true)]
    [InlineData("$2y$11$abc", true)]
    [InlineData("$2c$10$abc", false)]
    [InlineData("$2a$1$abc", false)]
    [InlineData("password", false)]
    public void Recognises_bcrypt_like_go(string value, bool expected) => Assert.Equal(expected, Bcrypt.IsBcryptHash(value));
}
