using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Nats.Server.Tls;

/// <summary>
/// A loaded <c>tls {}</c> block (Go's GenTLSConfig): the server certificate chain, the client CA pool
/// and the cipher policy, ready to hand to each connection's SslStream. Created when the configuration
/// is read, so bad files are configuration errors with Go's texts.
/// </summary>
public sealed class TlsServerContext
{
    private static readonly Oid ClientAuthUsage = new("1.3.6.1.5.5.7.3.2");
    private static readonly Oid ServerAuthUsage = new("1.3.6.1.5.5.7.3.1");

    private readonly SslStreamCertificateContext? _certificate;
    private readonly X509Certificate2? _leaf;
    private readonly X509Certificate2Collection? _clientCas;
    private readonly CipherSuitesPolicy? _cipherPolicy;

    private TlsServerContext(TlsOptions options, SslStreamCertificateContext? certificate, X509Certificate2? leaf,
        X509Certificate2Collection? clientCas, CipherSuitesPolicy? cipherPolicy)
    {
        Options = options;
        _certificate = certificate;
        _leaf = leaf;
        _clientCas = clientCas;
        _cipherPolicy = cipherPolicy;
    }

    public TlsOptions Options { get; }

    /// <summary>The server's own certificate (also used by the HTTPS monitor).</summary>
    public X509Certificate2 Certificate => _leaf ?? throw new InvalidOperationException("this TLS block has no certificate (a dialling side's)");

    /// <summary>Go's <c>&amp;tls.Config{MinVersion: tls.VersionTLS12}</c>: what a leaf remote without a <c>tls {}</c> block uses
    /// when the hub requires TLS (no certificate of ours, the system roots, the host name checked).</summary>
    internal static TlsServerContext DefaultClient { get; } = new(new TlsOptions(), null, null, null, null);

    public bool Verify => Options.Verify;

    public TimeSpan Timeout => TimeSpan.FromSeconds(Options.EffectiveTimeoutSeconds);

    /// <summary>connection_rate_limit's counter; null without a limit.</summary>
    internal ConnectionRateCounter? RateCounter { get; private init; }

    /// <summary>Loads the files; throws <see cref="InvalidOperationException"/> with Go's error text.</summary>
    public static TlsServerContext Create(TlsOptions options)
    {
        if (!string.IsNullOrEmpty(options.CertFile) && string.IsNullOrEmpty(options.KeyFile))
        {
            throw new InvalidOperationException("missing 'key_file' in TLS configuration");
        }
        if (string.IsNullOrEmpty(options.CertFile))
        {
            // Go accepts a block without certificates and then fails every handshake; we refuse it up front.
            throw new InvalidOperationException(string.IsNullOrEmpty(options.KeyFile)
                ? "TLS Server certificate must be present and valid"
                : "missing 'cert_file' in TLS configuration");
        }
        return Load(options);
    }

    /// <summary>
    /// A block for the dialling side only (a leaf remote's <c>tls {}</c>, Go's GenTLSConfig with RootCAs = ca_file): the
    /// certificate is optional there, since only a hub that verifies asks for one.
    /// </summary>
    internal static TlsServerContext CreateClient(TlsOptions options)
    {
        if (!string.IsNullOrEmpty(options.CertFile) || !string.IsNullOrEmpty(options.KeyFile))
        {
            return Create(options);
        }
        return Load(options);
    }

    private static TlsServerContext Load(TlsOptions options)
    {
        CheckCurves(options.CurvePreferences);
        if (string.IsNullOrEmpty(options.CertFile))
        {
            return new TlsServerContext(options, null, null, LoadCas(options), LoadCipherPolicy(options));
        }

        X509Certificate2 leaf;
        var chain = new X509Certificate2Collection();
        try
        {
            MustExist(options.CertFile);
            MustExist(options.KeyFile!);
            leaf = X509Certificate2.CreateFromPemFile(options.CertFile, options.KeyFile);
            chain.ImportFromPemFile(options.CertFile);
        }
        catch (Exception e) when (e is CryptographicException or IOException or ArgumentException)
        {
            throw new InvalidOperationException($"error parsing X509 certificate/key pair: {e.Message}");
        }
        // The leaf comes first in the file; whatever follows are intermediates sent with it.
        var intermediates = new X509Certificate2Collection();
        foreach (var cert in chain)
        {
            if (cert.Thumbprint != leaf.Thumbprint)
            {
                intermediates.Add(cert);
            }
        }

        var context = SslStreamCertificateContext.Create(leaf, intermediates, offline: true);
        return new TlsServerContext(options, context, leaf, LoadCas(options), LoadCipherPolicy(options))
        {
            RateCounter = options.RateLimit > 0 ? new ConnectionRateCounter(options.RateLimit) : null,
        };
    }

    private static X509Certificate2Collection? LoadCas(TlsOptions options)
    {
        X509Certificate2Collection? cas = null;
        if (!string.IsNullOrEmpty(options.CaFile))
        {
            if (!File.Exists(options.CaFile))
            {
                throw new InvalidOperationException($"open {options.CaFile}: no such file or directory");
            }
            cas = new X509Certificate2Collection();
            try
            {
                cas.ImportFromPemFile(options.CaFile);
            }
            catch (CryptographicException)
            {
                cas.Clear();
            }
            if (cas.Count == 0)
            {
                throw new InvalidOperationException("failed to parse root ca certificate");
            }
        }
        return cas;
    }

    private static CipherSuitesPolicy? LoadCipherPolicy(TlsOptions options)
    {
        CipherSuitesPolicy? policy = null;
        if (options.CipherSuites is { } suites)
        {
            if (OperatingSystem.IsWindows())
            {
                throw new InvalidOperationException("cipher_suites cannot be applied on Windows by nats-net-server (SslStream uses the system policy there); remove the option");
            }
            // Go's cipher_suites only restricts TLS 1.2; TLS 1.3 suites are always available there.
            policy = new CipherSuitesPolicy(suites.Concat(TlsNames.Tls13Suites).Distinct());
        }
        return policy;
    }

    /// <summary>The SslStream options for one connection; <paramref name="verifier"/> records why a client certificate was refused.</summary>
    internal SslServerAuthenticationOptions CreateServerOptions(ClientCertificateVerifier verifier) =>
        CreateServerOptions(Options.Verify, verifier.Validate);

    /// <param name="requireCertificate">Ask the other side for its certificate (verify, or always for a route or gateway).</param>
    internal SslServerAuthenticationOptions CreateServerOptions(bool requireCertificate, RemoteCertificateValidationCallback validate) => new()
    {
        ServerCertificateContext = _certificate,
        ClientCertificateRequired = requireCertificate,
        EnabledSslProtocols = EnabledProtocols,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        CipherSuitesPolicy = _cipherPolicy,
        RemoteCertificateValidationCallback = validate,
    };

    /// <summary>The side that dials (a route, gateway or leaf remote): our certificate as the client's, the peer's checked by <paramref name="validate"/>.</summary>
    internal SslClientAuthenticationOptions CreateClientOptions(string targetHost, RemoteCertificateValidationCallback validate) => new()
    {
        TargetHost = targetHost,
        ClientCertificateContext = _certificate,
        EnabledSslProtocols = EnabledProtocols,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        CipherSuitesPolicy = _cipherPolicy,
        RemoteCertificateValidationCallback = validate,
    };

    private SslProtocols EnabledProtocols => Options.MinVersion == SslProtocols.Tls13 ? SslProtocols.Tls13 : SslProtocols.Tls12 | SslProtocols.Tls13;

    /// <summary>Go's verification of a client certificate: against ca_file when given (else the system roots), for client authentication.</summary>
    internal string? CheckClientCertificate(X509Certificate? presented)
    {
        if (!Options.Verify)
        {
            return null;
        }
        return CheckPeerCertificate(presented, asClient: true);
    }

    /// <summary>
    /// Go's crypto/tls check of the other side's certificate with this block's CA (Go's RootCAs and ClientCAs are both
    /// ca_file for peers): a client's for client authentication, a server's for server authentication. The name check of a
    /// server certificate is the caller's (it knows the host it dialled).
    /// </summary>
    internal string? CheckPeerCertificate(X509Certificate? presented, bool asClient)
    {
        if (presented is null)
        {
            return asClient ? "tls: client didn't provide a certificate" : "tls: server didn't provide a certificate";
        }
        using var cert = new X509Certificate2(presented);
        using var chain = new X509Chain();
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.ApplicationPolicy.Add(asClient ? ClientAuthUsage : ServerAuthUsage);
        if (_clientCas is not null)
        {
            chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.AddRange(_clientCas);
        }
        if (!chain.Build(cert))
        {
            var status = chain.ChainStatus.Select(s => s.Status).Aggregate(X509ChainStatusFlags.NoError, (a, b) => a | b);
            var reason = (status & (X509ChainStatusFlags.NotTimeValid)) != 0
                ? "x509: certificate has expired or is not yet valid"
                : (status & X509ChainStatusFlags.NotValidForUsage) != 0
                    ? "x509: certificate specifies an incompatible key usage"
                    : "x509: certificate signed by unknown authority";
            return asClient ? "tls: failed to verify client certificate: " + reason : reason;
        }
        return null;
    }

    private static void MustExist(string path)
    {
        if (!File.Exists(path))
        {
            throw new InvalidOperationException($"error parsing X509 certificate/key pair: open {path}: no such file or directory");
        }
    }

    /// <summary>
    /// SslStream has no way to choose key exchange groups: the platform's defaults (which include all
    /// four of Go's curves) are used. A list naming all four changes nothing and is accepted; a list
    /// that restricts them cannot be honoured and is refused rather than silently ignored.
    /// </summary>
    private static void CheckCurves(List<string>? curves)
    {
        if (curves is null || TlsConfigBinder.GoCurves.All(curves.Contains))
        {
            return;
        }
        throw new InvalidOperationException(
            $"curve_preferences [{string.Join(", ", curves)}] cannot be enforced by nats-net-server: .NET's SslStream offers the platform's groups " +
            "(X25519, CurveP256, CurveP384, CurveP521); list all four or remove the option");
    }
}

/// <summary>One connection's certificate check, keeping the refusal reason for Go's log line.</summary>
internal sealed class ClientCertificateVerifier(TlsServerContext context)
{
    public string? FailureReason { get; private set; }

    public bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        FailureReason = context.CheckClientCertificate(certificate);
        return FailureReason is null;
    }
}
