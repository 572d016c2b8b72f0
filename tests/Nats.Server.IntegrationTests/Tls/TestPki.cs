using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>
/// A throwaway certificate authority made with .NET's CertificateRequest for one test: a CA, a server
/// certificate for localhost/127.0.0.1 and client certificates on demand, written as PEM files into a
/// temporary directory that is deleted afterwards (no key is ever committed).
/// </summary>
internal sealed class TestPki : IDisposable
{
    private static readonly Oid ServerAuth = new("1.3.6.1.5.5.7.3.1");
    private static readonly Oid ClientAuth = new("1.3.6.1.5.5.7.3.2");

    private readonly X509Certificate2 _ca;
    private long _serial = 1;

    /// <param name="caName">The CA's common name: two authorities of one test need different names (Go's error then has no candidate hint).</param>
    public TestPki(string caName = "NATS Test CA")
    {
        Directory = System.IO.Directory.CreateTempSubdirectory("nats-tls-").FullName;
        using var caKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={caName}, O=nats-net-server tests", caKey, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, false));
        _ca = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddDays(2));
        CaFile = Write("ca.pem", _ca.ExportCertificatePem());
        (ServerCertFile, ServerKeyFile) = Issue("server", "CN=localhost", ServerAuth, san =>
        {
            san.AddDnsName("localhost");
            san.AddIpAddress(IPAddress.Loopback);
        });
    }

    public string Directory { get; }
    public string CaFile { get; }
    public string ServerCertFile { get; }
    public string ServerKeyFile { get; }

    public X509Certificate2 CaCertificate => _ca;

    /// <summary>Issues a new server certificate into the same files (what an operator does before SIGHUP); returns its thumbprint.</summary>
    public string RenewServerCertificate()
    {
        var (cert, _) = Issue("server", "CN=localhost", ServerAuth, san =>
        {
            san.AddDnsName("localhost");
            san.AddIpAddress(IPAddress.Loopback);
        });
        using var renewed = X509Certificate2.CreateFromPem(File.ReadAllText(cert));
        return renewed.Thumbprint;
    }

    /// <summary>The tls {} block for a server using these files.</summary>
    public string ServerTlsBlock(string extra = "") =>
        $"tls {{\n  cert_file: \"{ServerCertFile}\"\n  key_file: \"{ServerKeyFile}\"\n  ca_file: \"{CaFile}\"\n  {extra}\n}}";

    /// <summary>
    /// A certificate a server shows on a route, gateway or leaf connection: as the accepting side (server auth) and as
    /// the dialling side (client auth), for localhost and 127.0.0.1; returns the tls {} block that uses it with this CA.
    /// </summary>
    public string PeerTlsBlock(string name, string? caFile = null, string extra = "")
    {
        var (cert, key) = IssuePeer(name);
        return $"tls {{\n  cert_file: \"{cert}\"\n  key_file: \"{key}\"\n  ca_file: \"{caFile ?? CaFile}\"\n  timeout: 10\n  {extra}\n}}";
    }

    /// <summary>Issues a server-to-server certificate (server and client auth, localhost and 127.0.0.1); returns the PEM file paths.</summary>
    public (string CertFile, string KeyFile) IssuePeer(string name) =>
        Issue(name, $"CN={name}", [ServerAuth, ClientAuth], san =>
        {
            san.AddDnsName("localhost");
            san.AddIpAddress(IPAddress.Loopback);
        });

    /// <summary>Issues a client certificate; returns the PEM file paths.</summary>
    public (string CertFile, string KeyFile) IssueClient(string name, string subject, string? email = null, string? dnsName = null) =>
        Issue(name, subject, ClientAuth, san =>
        {
            if (email is not null)
            {
                san.AddEmailAddress(email);
            }
            if (dnsName is not null)
            {
                san.AddDnsName(dnsName);
            }
        });

    /// <summary>A client certificate with its key, for SslStream and NATS.Net.</summary>
    public static X509Certificate2 Load(string certFile, string keyFile) => X509Certificate2.CreateFromPemFile(certFile, keyFile);

    public void Dispose()
    {
        _ca.Dispose();
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private (string, string) Issue(string name, string subject, Oid usage, Action<SubjectAlternativeNameBuilder> names) =>
        Issue(name, subject, [usage], names);

    private (string, string) Issue(string name, string subject, Oid[] usages, Action<SubjectAlternativeNameBuilder> names)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, true));
        var usageOids = new OidCollection();
        foreach (var usage in usages)
        {
            usageOids.Add(usage);
        }
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(usageOids, false));
        var san = new SubjectAlternativeNameBuilder();
        names(san);
        var built = san.Build();
        if (built.RawData.Length > 2)
        {
            request.CertificateExtensions.Add(built);
        }
        var serial = BitConverter.GetBytes(Interlocked.Increment(ref _serial) + 1000);
        using var cert = request.Create(_ca, DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddDays(1), serial);
        var certFile = Write($"{name}-cert.pem", cert.ExportCertificatePem());
        var keyFile = Write($"{name}-key.pem", key.ExportPkcs8PrivateKeyPem());
        return (certFile, keyFile);
    }

    private string Write(string name, string pem)
    {
        var path = Path.Combine(Directory, name);
        File.WriteAllText(path, pem + "\n");
        return path;
    }
}
