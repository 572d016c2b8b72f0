using System.Net.Security;
using System.Security.Authentication;

namespace Nats.Server.Tls;

/// <summary>Go's names for cipher suites and protocol versions (ciphersuites.go, tlsVersion) and the .NET values they map to.</summary>
internal static class TlsNames
{
    /// <summary>Go's cipherMap keys; all are IANA names except the two ECDHE ChaCha suites, which Go spells without "_SHA256".</summary>
    private static readonly string[] GoCiphers =
    [
        "TLS_RSA_WITH_RC4_128_SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC_SHA",
        "TLS_RSA_WITH_AES_128_CBC_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        "TLS_ECDHE_RSA_WITH_RC4_128_SHA", "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
    ];

    /// <summary>TLS 1.3 suites: Go always enables them whatever cipher_suites says, so the .NET policy must list them too.</summary>
    internal static readonly TlsCipherSuite[] Tls13Suites =
    [
        TlsCipherSuite.TLS_AES_128_GCM_SHA256, TlsCipherSuite.TLS_AES_256_GCM_SHA384, TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
    ];

    public static bool TryParseCipher(string goName, out TlsCipherSuite suite)
    {
        suite = default;
        if (!GoCiphers.Contains(goName, StringComparer.Ordinal))
        {
            return false;
        }
        var iana = goName.EndsWith("_CHACHA20_POLY1305", StringComparison.Ordinal) ? goName + "_SHA256" : goName;
        return Enum.TryParse(iana, out suite);
    }

    /// <summary>Go's tlsCipher: the name as Go prints it in /connz and the log.</summary>
    public static string CipherName(TlsCipherSuite suite)
    {
        var name = suite.ToString();
        if (name.StartsWith("TLS_ECDHE_", StringComparison.Ordinal) && name.EndsWith("_CHACHA20_POLY1305_SHA256", StringComparison.Ordinal))
        {
            name = name[..^"_SHA256".Length];
        }
        return GoCiphers.Contains(name, StringComparer.Ordinal) ? name : $"Unknown [0x{(ushort)suite:x}]";
    }

    /// <summary>Go's tlsVersion.</summary>
    public static string VersionName(SslProtocols protocol) => protocol switch
    {
#pragma warning disable SYSLIB0039 // Names only: older versions are never negotiated.
        SslProtocols.Tls => "1.0",
        SslProtocols.Tls11 => "1.1",
#pragma warning restore SYSLIB0039
        SslProtocols.Tls12 => "1.2",
        SslProtocols.Tls13 => "1.3",
        _ => $"Unknown [0x{(int)protocol:x}]",
    };
}
