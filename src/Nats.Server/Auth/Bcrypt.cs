namespace Nats.Server.Auth;

/// <summary>
/// bcrypt password hashes ($2a$/$2b$/$2x$/$2y$) as the Go server checks them: a configured password
/// that looks like a bcrypt hash is compared with golang.org/x/crypto/bcrypt, anything else exactly.
/// The comparison itself is BCrypt.Net-Next, which treats every minor version alike and uses only
/// the first 72 bytes of the password plus NUL, as x/crypto does (the vectors in BcryptTests show it).
/// </summary>
internal static class Bcrypt
{
    /// <summary>Go's isBcrypt: "$2" then a, b, x or y, "$", two digits, "$".</summary>
    public static bool IsBcryptHash(string? value) =>
        value is { Length: >= 7 } && value[0] == '$' && value[1] == '2' && value[2] is 'a' or 'b' or 'x' or 'y'
        && value[3] == '$' && char.IsAsciiDigit(value[4]) && char.IsAsciiDigit(value[5]) && value[6] == '$';

    /// <summary>False for a wrong password and for a malformed hash (bad cost, short salt), which Go also refuses.</summary>
    public static bool Verify(string password, string hash)
    {
        try
        {
            return BCrypt.Net.BCrypt.Verify(password, hash);
        }
        // The package reports a malformed hash by throwing; for a login that is just a refusal.
        catch (Exception e) when (e is BCrypt.Net.SaltParseException or ArgumentException or FormatException)
        {
            return false;
        }
    }
}
