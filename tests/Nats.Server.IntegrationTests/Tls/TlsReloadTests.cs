using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>Certificate rotation: a configuration reload (SIGHUP) serves new connections with the renewed certificate.</summary>
public sealed class TlsReloadTests
{
    [Fact]
    public async Task Reload_picks_up_a_renewed_certificate_for_new_connections_and_keeps_old_ones()
    {
        using var pki = new TestPki();
        var config = Path.Combine(pki.Directory, "server.conf");
        await File.WriteAllTextAsync(config, pki.ServerTlsBlock() + "\n");
        var cli = CommandLineOptions.Parse(["-c", config, "-a", "127.0.0.1", "-p", "-1"]);
        var log = new LogCapture();
        using var factory = log.CreateFactory();
        await using var server = new NatsServer(cli.BuildServerOptions(out _), factory) { CommandLineOverrides = cli.ApplyTo };
        await server.StartAsync();

        await using var before = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
        var oldThumbprint = ((System.Security.Cryptography.X509Certificates.X509Certificate2)before.Ssl!.RemoteCertificate!).Thumbprint;
        await before.SendAsync("CONNECT {}\r\nSUB r 1\r\nPING\r\n");
        await before.ReadUntilAsync("PONG\r\n");

        var newThumbprint = pki.RenewServerCertificate();
        Assert.NotEqual(oldThumbprint, newThumbprint);
        await server.ReloadAsync();
        await log.WaitForAsync("Reloaded: tls = enabled");

        await using var after = await TlsRawClient.ConnectAsync(server.Port, pki.CaCertificate);
        Assert.Equal(newThumbprint, ((System.Security.Cryptography.X509Certificates.X509Certificate2)after.Ssl!.RemoteCertificate!).Thumbprint);
        await after.SendAsync("CONNECT {}\r\nPUB r 2\r\nok\r\nPING\r\n");
        await after.ReadUntilAsync("PONG\r\n");
        Assert.Contains("MSG r 1 2\r\nok", await before.ReadUntilAsync("ok\r\n"));
    }
}
