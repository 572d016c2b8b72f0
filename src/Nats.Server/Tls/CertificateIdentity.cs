using System.Formats.Asn1;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Nats.Server.Tls;

/// <summary>
/// The names verify_and_map tries for a client certificate, in Go's order (checkClientTLSCertSubject):
/// SAN emails, SAN DNS names, SAN URIs, then the subject as a distinguished name (matched attribute by
/// attribute, in order or reordered), then Go's pkix string of the subject with domain components
/// appended, then that string alone.
/// </summary>
internal sealed class CertificateIdentity
{
    private const string DomainComponentOid = "0.9.2342.19200300.100.1.25";

    private static readonly Dictionary<string, string> TypeNames = new(StringComparer.Ordinal)
    {
        ["2.5.4.6"] = "C",
        ["2.5.4.10"] = "O",
        ["2.5.4.11"] = "OU",
        ["2.5.4.3"] = "CN",
        ["2.5.4.5"] = "SERIALNUMBER",
        ["2.5.4.7"] = "L",
        ["2.5.4.8"] = "ST",
        ["2.5.4.9"] = "STREET",
        ["2.5.4.17"] = "POSTALCODE",
        [DomainComponentOid] = "DC",
        ["0.9.2342.19200300.100.1.1"] = "UID",
        ["1.2.840.113549.1.9.1"] = "EMAILADDRESS",
    };

    private CertificateIdentity(List<string> names, List<List<(string Type, string Value)>> dn, string subject, string domainComponents)
    {
        SanNames = names;
        DistinguishedName = dn;
        Subject = subject;
        DomainComponents = domainComponents;
    }

    /// <summary>Emails, then DNS names, then URIs from the subject alternative names.</summary>
    public IReadOnlyList<string> SanNames { get; }

    /// <summary>The subject's RDNs, most specific first (as an LDAP DN reads), every attribute kept.</summary>
    public List<List<(string Type, string Value)>> DistinguishedName { get; }

    /// <summary>Go's cert.Subject.ToRDNSequence().String().</summary>
    public string Subject { get; }

    /// <summary>"DC=a,DC=b" in certificate order, or empty.</summary>
    public string DomainComponents { get; }

    public static CertificateIdentity From(X509Certificate2 cert)
    {
        var rdns = ReadRdns(cert.SubjectName.RawData);
        var dn = Enumerable.Reverse(rdns).Select(r => r.Select(a => (TypeNames.GetValueOrDefault(a.Oid, a.Oid), a.Value)).ToList()).ToList();
        var dcs = string.Join(",", rdns.SelectMany(r => r).Where(a => a.Oid == DomainComponentOid).Select(a => "DC=" + a.Value));
        return new CertificateIdentity(ReadSanNames(cert), dn, GoSubjectString(rdns), dcs);
    }

    /// <summary>go-ldap's DN.Equal, or failing that RDNsMatch (same RDNs in any order), against a user name written as a DN.</summary>
    public bool MatchesDn(string userName, bool anyOrder)
    {
        var parsed = ParseDn(userName);
        if (parsed is null || parsed.Count != DistinguishedName.Count)
        {
            return false;
        }
        if (!anyOrder)
        {
            return parsed.Zip(DistinguishedName).All(p => RdnEqual(p.First, p.Second));
        }
        return parsed.All(r => DistinguishedName.Any(c => RdnEqual(r, c)));
    }

    private static bool RdnEqual(List<(string Type, string Value)> a, List<(string Type, string Value)> b) =>
        a.Count == b.Count && a.All(x => b.Any(y => string.Equals(x.Type, y.Type, StringComparison.OrdinalIgnoreCase) && x.Value == y.Value));

    /// <summary>A small RFC 4514 reader: RDNs split on unescaped ',' or ';', attributes on '+'; null when not a DN.</summary>
    private static List<List<(string Type, string Value)>>? ParseDn(string text)
    {
        var result = new List<List<(string, string)>>();
        var rdn = new List<(string, string)>();
        var token = new StringBuilder();
        string? type = null;
        for (var i = 0; i <= text.Length; i++)
        {
            var c = i < text.Length ? text[i] : ',';
            if (c == '\\' && i + 1 < text.Length)
            {
                token.Append(text[++i]);
                continue;
            }
            if (c == '=' && type is null)
            {
                type = token.ToString().Trim();
                token.Clear();
                continue;
            }
            if (c is ',' or ';' or '+')
            {
                if (type is null || type.Length == 0)
                {
                    return null;
                }
                rdn.Add((type, token.ToString().Trim()));
                token.Clear();
                type = null;
                if (c != '+')
                {
                    result.Add(rdn);
                    rdn = [];
                }
                continue;
            }
            token.Append(c);
        }
        return result;
    }

    private static List<List<(string Oid, string Value)>> ReadRdns(byte[] rawSubject)
    {
        var rdns = new List<List<(string, string)>>();
        try
        {
            var sequence = new AsnReader(rawSubject, AsnEncodingRules.DER).ReadSequence();
            while (sequence.HasData)
            {
                var set = sequence.ReadSetOf();
                var rdn = new List<(string, string)>();
                while (set.HasData)
                {
                    var attribute = set.ReadSequence();
                    var oid = attribute.ReadObjectIdentifier();
                    var tag = attribute.PeekTag();
                    var value = tag.TagValue switch
                    {
                        (int)UniversalTagNumber.UTF8String => attribute.ReadCharacterString(UniversalTagNumber.UTF8String),
                        (int)UniversalTagNumber.PrintableString => attribute.ReadCharacterString(UniversalTagNumber.PrintableString),
                        (int)UniversalTagNumber.IA5String => attribute.ReadCharacterString(UniversalTagNumber.IA5String),
                        (int)UniversalTagNumber.T61String => attribute.ReadCharacterString(UniversalTagNumber.T61String),
                        (int)UniversalTagNumber.BMPString => attribute.ReadCharacterString(UniversalTagNumber.BMPString),
                        _ => Convert.ToHexString(attribute.ReadEncodedValue().Span),
                    };
                    rdn.Add((oid, value));
                }
                rdns.Add(rdn);
            }
        }
        catch (AsnContentException)
        {
        }
        return rdns;
    }

    /// <summary>
    /// Go's pkix.Name round trip: known attributes are regrouped in a fixed order (C, ST, L, STREET,
    /// POSTALCODE, O, OU as one multi-valued RDN each, then CN and SERIALNUMBER), other attributes are
    /// dropped, and the sequence is printed last to first with RFC 2253 escaping.
    /// </summary>
    private static string GoSubjectString(List<List<(string Oid, string Value)>> rdns)
    {
        var all = rdns.SelectMany(r => r).ToList();
        string[] groupOrder = ["2.5.4.6", "2.5.4.8", "2.5.4.7", "2.5.4.9", "2.5.4.17", "2.5.4.10", "2.5.4.11"];
        var sequence = new List<List<(string Oid, string Value)>>();
        foreach (var oid in groupOrder)
        {
            var values = all.Where(a => a.Oid == oid).ToList();
            if (values.Count > 0)
            {
                sequence.Add(values);
            }
        }
        foreach (var single in new[] { "2.5.4.3", "2.5.4.5" })
        {
            // Go keeps the last CN / serial number seen.
            var last = all.LastOrDefault(a => a.Oid == single);
            if (!string.IsNullOrEmpty(last.Value))
            {
                sequence.Add([last]);
            }
        }
        var text = new StringBuilder();
        for (var i = sequence.Count - 1; i >= 0; i--)
        {
            if (text.Length > 0)
            {
                text.Append(',');
            }
            for (var j = 0; j < sequence[i].Count; j++)
            {
                if (j > 0)
                {
                    text.Append('+');
                }
                text.Append(TypeNames[sequence[i][j].Oid]).Append('=');
                AppendEscaped(text, sequence[i][j].Value);
            }
        }
        return text.ToString();
    }

    private static void AppendEscaped(StringBuilder text, string value)
    {
        for (var k = 0; k < value.Length; k++)
        {
            var c = value[k];
            var escape = c switch
            {
                ',' or '+' or '"' or '\\' or '<' or '>' or ';' => true,
                ' ' => k == 0 || k == value.Length - 1,
                '#' => k == 0,
                _ => false,
            };
            if (escape)
            {
                text.Append('\\');
            }
            text.Append(c);
        }
    }

    private static List<string> ReadSanNames(X509Certificate2 cert)
    {
        var emails = new List<string>();
        var dns = new List<string>();
        var uris = new List<string>();
        var extension = cert.Extensions["2.5.29.17"];
        if (extension is not null)
        {
            try
            {
                var names = new AsnReader(extension.RawData, AsnEncodingRules.DER).ReadSequence();
                while (names.HasData)
                {
                    var tag = names.PeekTag();
                    if (tag.TagClass == TagClass.ContextSpecific && tag.TagValue is 1 or 2 or 6)
                    {
                        var value = names.ReadCharacterString(UniversalTagNumber.IA5String, tag);
                        (tag.TagValue == 1 ? emails : tag.TagValue == 2 ? dns : uris).Add(value);
                    }
                    else
                    {
                        names.ReadEncodedValue();
                    }
                }
            }
            catch (AsnContentException)
            {
            }
        }
        return [.. emails, .. dns, .. uris];
    }
}
