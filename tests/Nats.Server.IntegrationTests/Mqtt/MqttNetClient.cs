using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>What the MQTTnet tests share: 3.1.1 options for a test server, connecting, and a client's messages as a channel.</summary>
internal static class MqttNetClient
{
    /// <summary>MQTT 3.1.1 to <paramref name="server"/>'s MQTT port.</summary>
    public static MqttClientOptions Options(MqttTestServer server, string clientId, bool clean = true) =>
        new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", server.MqttPort)
            .WithClientId(clientId)
            .WithCleanSession(clean)
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(TimeSpan.FromSeconds(30))
            .Build();

    public static async Task<IMqttClient> ConnectAsync(MqttTestServer server, string clientId, bool clean = true)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(Options(server, clientId, clean));
        return client;
    }

    /// <summary>Every message <paramref name="client"/> receives from now on, in order (subscribe before connecting to miss none).</summary>
    public static ChannelReader<MqttApplicationMessage> Inbox(IMqttClient client)
    {
        var channel = Channel.CreateUnbounded<MqttApplicationMessage>();
        client.ApplicationMessageReceivedAsync += e =>
        {
            channel.Writer.TryWrite(e.ApplicationMessage);
            return Task.CompletedTask;
        };
        return channel.Reader;
    }
}
