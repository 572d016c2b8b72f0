using System.Collections.Concurrent;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// kill -9 of the real executable right after an MQTTnet QoS 1 PUBACK arrived, with more publishes in
/// flight, several times over one store directory: every message whose PUBACK the client received is
/// in <c>$MQTT_msgs</c> after the restart, and a persistent session subscribed before gets them all.
/// </summary>
public sealed class MqttCrashTests
{
    private const int Cycles = 3;
    private const int AcksBeforeKill = 300;
    private const int InFlight = 32;
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Kill_right_after_a_puback_loses_no_acknowledged_qos1_message()
    {
        var storeDir = Directory.CreateTempSubdirectory("mqtt-crash-").FullName;
        var config = Path.Combine(storeDir, "mqtt.conf");
        File.WriteAllText(config, "server_name: mqtt_crash\nmqtt {\n host: 127.0.0.1\n port: -1\n}\n");
        var jsDir = Path.Combine(storeDir, "js");
        var acked = new ConcurrentDictionary<string, bool>();
        try
        {
            for (var cycle = 0; cycle <= Cycles; cycle++)
            {
                await using var server = await KillableServer.StartAsync(go: false, jsDir, "-c", config);
                try
                {
                    var mqttPort = server.MqttPort;
                    var port = server.Port;
                    if (cycle == 0)
                    {
                        // A persistent QoS 1 subscription: its consumer makes $MQTT_msgs (interest retention) keep every message.
                        using var subscriber = await ConnectAsync(mqttPort, "crash-sub", clean: false);
                        await subscriber.SubscribeAsync("crash/#", MqttQualityOfServiceLevel.AtLeastOnce);
                        await subscriber.DisconnectAsync();
                    }
                    await VerifyStoredAsync(port, acked, cycle);
                    if (cycle == Cycles)
                    {
                        await VerifyDeliveredAsync(mqttPort, acked);
                        await server.KillAsync();
                        break;
                    }
                    await PublishUntilKilledAsync(mqttPort, acked, cycle, server);
                }
                finally
                {
                    await server.KillAsync();
                }
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    private static async Task VerifyStoredAsync(int port, ConcurrentDictionary<string, bool> acked, int cycle)
    {
        if (acked.IsEmpty)
        {
            return;
        }
        await using var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = Wait });
        var js = new NatsJSContext(nats);
        var stream = await js.GetStreamAsync("$MQTT_msgs");
        var stored = new HashSet<string>();
        for (var seq = stream.Info.State.FirstSeq; seq <= stream.Info.State.LastSeq && seq > 0; seq++)
        {
            try
            {
                var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
                stored.Add(System.Text.Encoding.UTF8.GetString(message.Message.Data.Span));
            }
            catch (NatsJSApiException e) when (e.Error.Code == 404)
            {
                // A sequence the crash left as a gap.
            }
        }
        var lost = acked.Keys.Where(payload => !stored.Contains(payload)).Order().ToList();
        Assert.True(lost.Count == 0, $"cycle {cycle}: {lost.Count} acknowledged messages lost, e.g. {string.Join(", ", lost.Take(5))}");
    }

    private static async Task VerifyDeliveredAsync(int mqttPort, ConcurrentDictionary<string, bool> acked)
    {
        var missing = new HashSet<string>(acked.Keys);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var subscriber = new MqttClientFactory().CreateMqttClient();
        subscriber.ApplicationMessageReceivedAsync += e =>
        {
            lock (missing)
            {
                missing.Remove(e.ApplicationMessage.ConvertPayloadToString());
                if (missing.Count == 0)
                {
                    done.TrySetResult();
                }
            }
            return Task.CompletedTask;
        };
        var result = await subscriber.ConnectAsync(Options(mqttPort, "crash-sub", clean: false));
        Assert.True(result.IsSessionPresent);
        await done.Task.WaitAsync(TimeSpan.FromSeconds(90));
        await subscriber.DisconnectAsync();
    }

    private static async Task PublishUntilKilledAsync(int mqttPort, ConcurrentDictionary<string, bool> acked, int cycle, KillableServer server)
    {
        using var publisher = await ConnectAsync(mqttPort, $"crash-pub-{cycle}", clean: true);
        var ackedThisCycle = 0;
        var killed = 0;
        var window = new SemaphoreSlim(InFlight);
        var pending = new List<Task>();
        for (var i = 0; Volatile.Read(ref killed) == 0; i++)
        {
            await window.WaitAsync();
            var payload = $"c{cycle}-m{i}";
            var message = new MqttApplicationMessageBuilder().WithTopic($"crash/{i % 5}").WithPayload(payload)
                .WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce).Build();
            pending.Add(Task.Run(async () =>
            {
                try
                {
                    var ack = await publisher.PublishAsync(message);
                    if (ack.IsSuccess)
                    {
                        acked[payload] = true;
                        if (Interlocked.Increment(ref ackedThisCycle) == AcksBeforeKill && Interlocked.Exchange(ref killed, 1) == 0)
                        {
                            // SIGKILL the moment this PUBACK arrived, with more publishes in flight.
                            server.Kill();
                        }
                    }
                }
                catch (Exception) when (Volatile.Read(ref killed) == 1)
                {
                    // The server died under this publish: it was never acknowledged.
                }
                finally
                {
                    window.Release();
                }
            }));
        }
        await Task.WhenAll(pending).WaitAsync(TimeSpan.FromSeconds(90));
    }

    private static MqttClientOptions Options(int mqttPort, string clientId, bool clean) =>
        new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", mqttPort)
            .WithClientId(clientId)
            .WithCleanSession(clean)
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithTimeout(Wait)
            .Build();

    private static async Task<IMqttClient> ConnectAsync(int mqttPort, string clientId, bool clean)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        await client.ConnectAsync(Options(mqttPort, clientId, clean));
        return client;
    }
}
