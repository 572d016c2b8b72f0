using System.Diagnostics;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using Nats.Server.IntegrationTests.Tls;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>MQTT over TLS (<c>mqtt { tls {} }</c>): MQTTnet and mosquitto with the test CA, against Go 2.9.10 and ours.</summary>
public sealed class MqttTlsTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    public static TheoryData<string> Servers => new() { "go", "ours" };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Mqttnet_over_tls_publishes_and_subscribes(string kind)
    {
        using var pki = new TestPki();
        await using var server = await MqttTestServer.StartAsync(kind, pki.ServerTlsBlock());
        using var client = new MqttClientFactory().CreateMqttClient();
        var received = new TaskCompletionSource<MqttApplicationMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
        client.ApplicationMessageReceivedAsync += e =>
        {
            received.TrySetResult(e.ApplicationMessage);
            return Task.CompletedTask;
        };
        await client.ConnectAsync(new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", server.MqttPort)
            .WithClientId("tls-net")
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(Wait)
            .WithTlsOptions(o => o.UseTls().WithTargetHost("localhost").WithCertificateValidationHandler(e => TrustedByTestCa(pki, e.Certificate)))
            .Build());
        await client.SubscribeAsync("secure/#", MqttQualityOfServiceLevel.AtLeastOnce);

        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        await nats.PublishAsync("secure.a", Encoding.UTF8.GetBytes("from-nats"));
        var message = await received.Task.WaitAsync(Wait);
        Assert.Equal(("secure/a", "from-nats"), (message.Topic, message.ConvertPayloadToString()));
        var ack = await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("secure/b").WithPayload("x")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.True(ack.IsSuccess);
        await client.DisconnectAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Mosquitto_pub_with_cafile_reaches_a_nats_subscriber_and_plain_tcp_is_refused(string kind)
    {
        using var pki = new TestPki();
        await using var server = await MqttTestServer.StartAsync(kind, pki.ServerTlsBlock());
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("tls.>");
        await nats.PingAsync();
        var pub = await RunAsync("mosquitto_pub", "-h", "127.0.0.1", "-p", $"{server.MqttPort}", "--cafile", pki.CaFile, "-V", "mqttv311",
            "-q", "1", "-i", "tls-mpub", "-t", "tls/one", "-m", "sealed");
        Assert.Equal(0, pub.ExitCode);
        var message = await sub.Msgs.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("tls.one", "sealed"), (message.Subject, Encoding.UTF8.GetString(message.Data!)));

        // Without TLS the CONNECT is taken for a bad handshake and the connection closed.
        await using var plain = await MqttRawClient.ConnectAsync(server.MqttPort);
        await plain.SendAsync(MqttRawClient.Connect("tls-plain"));
        Assert.True(await plain.WaitClosedAsync());
    }

    internal static bool TrustedByTestCa(TestPki pki, X509Certificate? presented)
    {
        if (presented is null)
        {
            return false;
        }
        using var certificate = new X509Certificate2(presented);
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(pki.CaCertificate);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        return chain.Build(certificate);
    }

    private static async Task<Process> RunAsync(string file, params string[] args)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        var process = Process.Start(psi) ?? throw new InvalidOperationException($"{file} did not start (install mosquitto-clients)");
        await process.WaitForExitAsync().WaitAsync(Wait);
        return process;
    }
}
