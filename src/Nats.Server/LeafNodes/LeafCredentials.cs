using System.Text;
using System.Text.RegularExpressions;
using NATS.NKeys;

namespace Nats.Server.LeafNodes;

/// <summary>
/// A remote's <c>credentials</c> (.creds: the user JWT and the user's nkey seed between dashed lines), read at every
/// CONNECT as Go's sendLeafConnect does, so a renewed file is picked up at the next reconnect.
/// </summary>
internal static partial class LeafCredentials
{
    // Go's credsRe.
    [GeneratedRegex(@"\s*(?:(?:[-]{3,}[^\n]*[-]{3,}\n)(.+)(?:\n\s*[-]{3,}[^\n]*[-]{3,}\n))")]
    private static partial Regex Blocks();

    /// <summary>The JWT and the nonce signature (base64url, no padding) for CONNECT, or Go's error text.</summary>
    public static (string? Jwt, string? Sig, string? Error) Sign(string path, string? nonce)
    {
        string contents;
        try
        {
            contents = File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return (null, null, e is FileNotFoundException or DirectoryNotFoundException
                ? $"open {path}: no such file or directory"
                : $"open {path}: {e.Message}");
        }
        var items = Blocks().Matches(contents);
        if (items.Count < 2)
        {
            return (null, null, "Credentials file malformed");
        }
        KeyPair key;
        try
        {
            key = KeyPair.FromSeed(items[1].Groups[1].Value.Trim());
        }
        catch (Exception e) when (e is NKeysException or ArgumentException or FormatException)
        {
            return (null, null, "Credentials file has malformed seed");
        }
        var signature = new byte[64];
        key.Sign(Encoding.ASCII.GetBytes(nonce ?? ""), signature);
        return (items[0].Groups[1].Value.Trim(), Convert.ToBase64String(signature).TrimEnd('=').Replace('+', '-').Replace('/', '_'), null);
    }
}
