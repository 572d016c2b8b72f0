using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using NATS.Client.Core;
using static Nats.Server.IntegrationTests.Mqtt.MqttNetClient;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// MQTT over WebSocket (the websocket {} listener at /mqtt) with MQTTnet 5's WebSocket channel against
/// Go 2.9.10 and ours: both QoS levels, to and from NATS and MQTT-over-TCP clients, wrong paths and
/// allowed_connection_types (MQTT_WS).
/// </summary>
public sealed class MqttWebSocketTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    public static TheoryData<string> Servers => new() { "go", "ours" };

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Qos0_and_qos1_flow_between_websocket_tcp_and_nats_clients(string kind)
    {
        await using var server = await MqttTestServer.StartWithWebSocketAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        using var wsSub = await ConnectAsync(WebSocketOptions(server, "ws-sub"));
        using var wsPub = await ConnectAsync(WebSocketOptions(server, "ws-pub"));
        using var tcpSub = await ConnectAsync(TcpOptions(server, "tcp-sub"));
        var wsInbox = Inbox(wsSub);
        var tcpInbox = Inbox(tcpSub);
        await wsSub.SubscribeAsync(new MqttClientSubscribeOptionsBuilder()
            .WithTopicFilter("room/+/zero", MqttQualityOfServiceLevel.AtMostOnce)
            .WithTopicFilter("room/+/one", MqttQualityOfServiceLevel.AtLeastOnce)
            .Build());
        await tcpSub.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter("room/#", MqttQualityOfServiceLevel.AtLeastOnce).Build());
        await using var natsSub = await nats.SubscribeCoreAsync<byte[]>("room.>");
        await nats.PingAsync();

        await wsPub.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("room/a/zero").WithPayload("q0").Build());
        var ack = await wsPub.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("room/a/one").WithPayload("q1")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.True(ack.IsSuccess);

        var first = await wsInbox.ReadAsync().AsTask().WaitAsync(Wait);
        var second = await wsInbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("room/a/zero", "q0", MqttQualityOfServiceLevel.AtMostOnce), (first.Topic, first.ConvertPayloadToString(), first.QualityOfServiceLevel));
        Assert.Equal(("room/a/one", "q1", MqttQualityOfServiceLevel.AtLeastOnce), (second.Topic, second.ConvertPayloadToString(), second.QualityOfServiceLevel));
        var tcpGot = new[] { await tcpInbox.ReadAsync().AsTask().WaitAsync(Wait), await tcpInbox.ReadAsync().AsTask().WaitAsync(Wait) }
            .Select(m => (m.Topic, m.ConvertPayloadToString())).Order().ToArray();
        Assert.Equal([("room/a/one", "q1"), ("room/a/zero", "q0")], tcpGot);
        var n1 = await natsSub.Msgs.ReadAsync().AsTask().WaitAsync(Wait);
        var n2 = await natsSub.Msgs.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("room.a.zero", "q0", "0"), (n1.Subject, Encoding.UTF8.GetString(n1.Data!), n1.Headers?["Nmqtt-Pub"].ToString()));
        Assert.Equal(("room.a.one", "q1", "1"), (n2.Subject, Encoding.UTF8.GetString(n2.Data!), n2.Headers?["Nmqtt-Pub"].ToString()));

        // NATS -> the WebSocket subscriber; a message bigger than one WebSocket frame of MQTTnet's or ours.
        var big = new string('x', 200_000);
        await nats.PublishAsync("room.b.zero", Encoding.UTF8.GetBytes(big));
        var fromNats = await wsInbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("room/b/zero", big.Length), (fromNats.Topic, fromNats.ConvertPayloadToString().Length));
        Assert.Equal(big, fromNats.ConvertPayloadToString());

        // Many packets in a row: every one arrives, in order, whatever the framing.
        for (var i = 0; i < 500; i++)
        {
            await wsPub.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("room/c/zero").WithPayload(i.ToString(System.Globalization.CultureInfo.InvariantCulture)).Build());
        }
        for (var i = 0; i < 500; i++)
        {
            var m = await wsInbox.ReadAsync().AsTask().WaitAsync(Wait);
            Assert.Equal(i.ToString(System.Globalization.CultureInfo.InvariantCulture), m.ConvertPayloadToString());
        }
        await wsPub.DisconnectAsync();
        await wsSub.DisconnectAsync();
        await tcpSub.DisconnectAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task An_mqtt_client_on_another_path_and_a_nats_client_on_the_mqtt_path_do_not_connect(string kind)
    {
        await using var server = await MqttTestServer.StartWithWebSocketAsync(kind);
        var wrongPath = new MqttClientOptionsBuilder()
            .WithWebSocketServer(o => o.WithUri($"ws://127.0.0.1:{server.WebSocketPort}/"))
            .WithClientId("ws-wrong-path")
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(TimeSpan.FromSeconds(5))
            .Build();
        using var mqtt = new MqttClientFactory().CreateMqttClient();
        // On / the server speaks NATS (INFO first), which MQTTnet cannot take for a CONNACK.
        await Assert.ThrowsAnyAsync<Exception>(() => mqtt.ConnectAsync(wrongPath));
        Assert.False(mqtt.IsConnected);

        // On /mqtt the server waits for an MQTT CONNECT and never sends INFO: NATS.Net cannot connect.
        await using var nats = new NatsConnection(new NatsOpts
        {
            Url = server.MqttWebSocketUrl,
            ConnectTimeout = TimeSpan.FromSeconds(3),
            MaxReconnectRetry = 0,
        });
        await Assert.ThrowsAnyAsync<Exception>(async () => await nats.ConnectAsync());

        // The listener still serves both afterwards.
        using var good = await ConnectAsync(WebSocketOptions(server, "ws-after"));
        Assert.True(good.IsConnected);
        await good.DisconnectAsync();
        await using var natsOnRoot = new NatsConnection(new NatsOpts { Url = $"ws://127.0.0.1:{server.WebSocketPort}" });
        await natsOnRoot.ConnectAsync();
        await natsOnRoot.PingAsync();
    }

    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Allowed_connection_types_tell_mqtt_over_websocket_from_mqtt(string kind)
    {
        await using var server = await MqttTestServer.StartWithWebSocketAsync(kind, "no_tls: true", extraConfig:
            """
            authorization {
              users = [
                { user: tcponly, password: pw, allowed_connection_types: ["MQTT"] }
                { user: wsonly, password: pw, allowed_connection_types: ["mqtt_ws"] }
              ]
            }
            """);
        using var client = new MqttClientFactory().CreateMqttClient();

        Assert.Equal(MqttClientConnectResultCode.NotAuthorized, await ConnectCodeAsync(client, WebSocketOptions(server, "c1", "tcponly")));
        Assert.False(client.IsConnected);
        Assert.Equal(MqttClientConnectResultCode.NotAuthorized, await ConnectCodeAsync(client, TcpOptions(server, "c2", "wsonly")));
        Assert.False(client.IsConnected);

        Assert.Equal(MqttClientConnectResultCode.Success, await ConnectCodeAsync(client, WebSocketOptions(server, "c3", "wsonly")));
        await client.DisconnectAsync();
        Assert.Equal(MqttClientConnectResultCode.Success, await ConnectCodeAsync(client, TcpOptions(server, "c4", "tcponly")));
        await client.DisconnectAsync();
    }

    /// <summary>wss:// carries MQTT inside the websocket block's TLS; the mqtt block's own tls {} is for its port only (Go's createMQTTClient).</summary>
    [Theory]
    [MemberData(nameof(Servers))]
    public async Task Mqttnet_over_wss_uses_the_websocket_listeners_tls(string kind)
    {
        using var pki = new Tls.TestPki();
        await using var server = await MqttTestServer.StartWithWebSocketAsync(kind, pki.ServerTlsBlock(), pki.ServerTlsBlock());
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });
        using var client = new MqttClientFactory().CreateMqttClient();
        var inbox = Inbox(client);
        await client.ConnectAsync(new MqttClientOptionsBuilder()
            .WithWebSocketServer(o => o.WithUri($"wss://127.0.0.1:{server.WebSocketPort}/mqtt"))
            .WithTlsOptions(o => o.UseTls().WithCertificateValidationHandler(e => MqttTlsTests.TrustedByTestCa(pki, e.Certificate)))
            .WithClientId("wss-net")
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(Wait)
            .Build());
        await client.SubscribeAsync("secure/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await nats.PublishAsync("secure.a", Encoding.UTF8.GetBytes("from-nats"));
        var message = await inbox.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("secure/a", "from-nats"), (message.Topic, message.ConvertPayloadToString()));
        var ack = await client.PublishAsync(new MqttApplicationMessageBuilder().WithTopic("secure/b").WithPayload("x")
            .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build());
        Assert.True(ack.IsSuccess);
        await client.DisconnectAsync();
    }

    [Fact]
    public async Task Mqtt_path_without_an_mqtt_block_is_refused_and_the_listener_keeps_serving_nats()
    {
        // Go 2.9.10 accepts the upgrade and then panics on the CONNECT; ours answers the handshake with 400.
        var settings = new Infrastructure.ServerSettings();
        settings.RawConfig.Add("websocket {\n host: 127.0.0.1\n port: -1\n no_tls: true\n}");
        await using var ours = await Infrastructure.InProcessServer.StartAsync(settings);
        var port = ours.Server.WebSocketPort;
        using var mqtt = new MqttClientFactory().CreateMqttClient();
        await Assert.ThrowsAnyAsync<Exception>(() => mqtt.ConnectAsync(new MqttClientOptionsBuilder()
            .WithWebSocketServer(o => o.WithUri($"ws://127.0.0.1:{port}/mqtt"))
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(TimeSpan.FromSeconds(5))
            .Build()));
        await using var nats = new NatsConnection(new NatsOpts { Url = $"ws://127.0.0.1:{port}" });
        await nats.ConnectAsync();
        await nats.PingAsync();
    }

    private static MqttClientOptions WebSocketOptions(MqttTestServer server, string clientId, string? user = null) =>
        Credentials(new MqttClientOptionsBuilder().WithWebSocketServer(o => o.WithUri(server.MqttWebSocketUrl)), user)
            .WithClientId(clientId)
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(Wait)
            .Build();

    private static MqttClientOptions TcpOptions(MqttTestServer server, string clientId, string? user = null) =>
        Credentials(new MqttClientOptionsBuilder().WithTcpServer("127.0.0.1", server.MqttPort), user)
            .WithClientId(clientId)
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(Wait)
            .Build();

    private static MqttClientOptionsBuilder Credentials(MqttClientOptionsBuilder builder, string? user) =>
        user is null ? builder : builder.WithCredentials(user, "pw");

    private static async Task<IMqttClient> ConnectAsync(MqttClientOptions options)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(options);
        return client;
    }

    /// <summary>The CONNACK's code, whether MQTTnet returns a refusal or throws it.</summary>
    private static async Task<MqttClientConnectResultCode> ConnectCodeAsync(IMqttClient client, MqttClientOptions options)
    {
        try
        {
            return (await client.ConnectAsync(options)).ResultCode;
        }
        catch (Exception e) when (e.GetType().GetProperty("ResultCode")?.GetValue(e) is MqttClientConnectResultCode code)
        {
            // MQTTnet reports a refused CONNACK as MqttConnectingFailedException carrying the code.
            return code;
        }
    }
}
