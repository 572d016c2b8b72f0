using System.Net.Security;
using System.Security.Authentication;

namespace Nats.Server.Tls;

/// <summary>
/// A <c>tls {}</c> block (or the --tls* flags), as Go's TLSConfigOpts: file names and switches as
/// written; <see cref="TlsServerContext"/> loads the files and turns them into SslStream options.
/// </summary>
public sealed class TlsOptions
{
    /// <summary>Go's TLS_TIMEOUT: the handshake must finish within this many seconds.</summary>
    public const double DefaultTimeoutSeconds = 2;

    public string? CertFile { get; set; }
    public string? KeyFile { get; set; }
    public string? CaFile { get; set; }

    /// <summary>verify (or verify_and_map): clients must present a certificate the CA vouches for.</summary>
    public bool Verify { get; set; }

    /// <summary>verify_and_map: the client certificate's email, SAN, URI or subject names the user.</summary>
    public bool Map { get; set; }

    /// <summary>insecure: only affects certificates this server checks as a TLS client (routes, leafnodes); accepted.</summary>
    public bool Insecure { get; set; }

    /// <summary>timeout in seconds; 0 means the default.</summary>
    public double Timeout { get; set; }

    /// <summary>cipher_suites (TLS 1.2 suites; TLS 1.3 suites stay on, as in Go). Null: the platform defaults.</summary>
    public List<TlsCipherSuite>? CipherSuites { get; set; }

    /// <summary>curve_preferences as written (Go names).</summary>
    public List<string>? CurvePreferences { get; set; }

    /// <summary>min_version (Go 2.10): the lowest protocol accepted; TLS 1.2 by default, as Go.</summary>
    public SslProtocols MinVersion { get; set; } = SslProtocols.Tls12;

    /// <summary>handshake_first (Go 2.10.4): TLS starts before INFO.</summary>
    public bool HandshakeFirst { get; set; }

    /// <summary>handshake_first "auto"/duration: wait this long for a TLS hello, else send INFO first.</summary>
    public TimeSpan HandshakeFirstFallback { get; set; }

    /// <summary>pinned_certs: lower-case hex SHA-256 of the client certificate's SubjectPublicKeyInfo.</summary>
    public HashSet<string>? PinnedCerts { get; set; }

    /// <summary>connection_rate_limit: TLS handshakes allowed per second (Go's rateCounter); 0 is no limit.</summary>
    public long RateLimit { get; set; }

    public double EffectiveTimeoutSeconds => Timeout > 0 ? Timeout : DefaultTimeoutSeconds;
}
