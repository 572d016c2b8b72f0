using System.Formats.Asn1;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Nats.Server.Tls;

/// <summary>
/// Go's matchesPinnedCert: with <c>pinned_certs</c> set, the certificate the other side presented must have the
/// SHA-256 of its DER SubjectPublicKeyInfo (lower-case hex) in the set. Checked once the handshake has succeeded
/// (so the peer sees a finished handshake and then the close, as with Go), and again by a reload.
/// </summary>
internal static class PinnedCertificates
{
    /// <summary>Go's error text, logged as "TLS [kind ]handshake error: certificate not pinned".</summary>
    public const string NotPinned = "certificate not pinned";

    /// <summary>Null when the certificate passes (or nothing is pinned); otherwise Go's debug line saying why not.</summary>
    public static string? Check(IReadOnlySet<string>? pinned, X509Certificate? presented)
    {
        if (pinned is null)
        {
            return null;
        }
        if (presented is null)
        {
            return "Failed pinned cert test as client did not provide a certificate";
        }
        var keyId = KeyId(presented);
        return pinned.Contains(keyId) ? null : $"Failed pinned cert test for key id: {keyId}";
    }

    /// <summary>Go hashes the certificate's raw SubjectPublicKeyInfo bytes, so they are read from the DER as they are
    /// rather than re-encoded from the parsed key.</summary>
    public static string KeyId(X509Certificate presented)
    {
        var certificate = new AsnReader(presented.GetRawCertData(), AsnEncodingRules.DER).ReadSequence();
        var tbs = certificate.ReadSequence();
        if (tbs.PeekTag().HasSameClassAndValue(new Asn1Tag(TagClass.ContextSpecific, 0)))
        {
            tbs.ReadEncodedValue();
        }
        tbs.ReadEncodedValue(); // serialNumber
        tbs.ReadEncodedValue(); // signature
        tbs.ReadEncodedValue(); // issuer
        tbs.ReadEncodedValue(); // validity
        tbs.ReadEncodedValue(); // subject
        return Convert.ToHexStringLower(SHA256.HashData(tbs.ReadEncodedValue().Span));
    }

    /// <summary>Go compares the sets with reflect.DeepEqual (an empty list parses as no set).</summary>
    public static bool SameSet(IReadOnlySet<string>? a, IReadOnlySet<string>? b) =>
        a is null ? b is null : b is not null && a.SetEquals(b);
}
