using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Nats.LoadBench.Servers;

internal static class SelfSignedCert
{
    /// <summary>Writes a fresh P-256 certificate for 127.0.0.1/localhost as PEM files, so no
    /// key material ever lives in the repository.</summary>
    public static (string CertFile, string KeyFile) Write(string dir)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var req = new CertificateRequest("CN=loadbench", key, HashAlgorithmName.SHA256);
        var san = new SubjectAlternativeNameBuilder();
        san.AddIpAddress(IPAddress.Loopback);
        san.AddDnsName("localhost");
        req.CertificateExtensions.Add(san.Build());
        req.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        req.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], false));
        using var cert = req.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(7));
        var certFile = Path.Combine(dir, "server-cert.pem");
        var keyFile = Path.Combine(dir, "server-key.pem");
        File.WriteAllText(certFile, cert.ExportCertificatePem());
        File.WriteAllText(keyFile, key.ExportPkcs8PrivateKeyPem());
        return (certFile, keyFile);
    }
}
