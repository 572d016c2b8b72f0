using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Kit;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// One MQTT QoS 0 subscriber (raw MQTT 3.1.1 client); the publisher is either an MQTT client (pure
/// MQTT row) or a raw NATS publisher on the mapped subject (cross-protocol row: NATS "a.b" is MQTT
/// "a/b"). The publisher is not paced, like a real MQTT client's: the server's flow control (a
/// publisher stalled behind a full subscriber, as for NATS clients) is what keeps it in step.
/// </summary>
internal sealed class MqttScenario : Scenario
{
    public bool NatsPublisher { get; init; }

    /// <summary>QoS of the MQTT publisher and subscription: 1 puts every message through JetStream
    /// (stored in $MQTT_msgs, delivered by the subscription's durable consumer, PUBACKed both ways).</summary>
    public byte Qos { get; init; }

    /// <summary>MQTT 5 clients against ours; Go speaks only 3.1.1, so its column is the same row in 3.1.1
    /// (and ours in 3.1.1 is the row without it, measured in the same run).</summary>
    public bool Version5 { get; init; }

    /// <summary>MQTT clients over the websocket listener's /mqtt path instead of the MQTT port.</summary>
    public bool WebSocket { get; init; }

    public override async Task<Measurement> RunAsync(RunContext run)
    {
        var ep = run.Endpoint;
        if (ep.MqttPort == 0 || (WebSocket && ep.WsPort == 0))
        {
            throw new SetupException("no MQTT listener configured");
        }

        var mqttPort = WebSocket ? ep.WsPort : ep.MqttPort;
        var v5 = Version5 && ep.Ours;

        var settings = run.Settings;
        string topic = $"bench/mqtt/{settings.RunId}";
        MqttConnection sub;
        try
        {
            sub = MqttConnection.Connect(ep.Host, mqttPort, $"lbsub{settings.RunId}", webSocket: WebSocket, v5: v5);
            sub.Subscribe(topic, Qos);
        }
        catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException or TimeoutException or InvalidOperationException)
        {
            throw new SetupException($"MQTT subscriber: {ex.Message}");
        }

        long count = 0, wrong = 0, lastTicks = 0;
        sub.OnPublish = length =>
        {
            if (length == PayloadSize)
            {
                count++;
            }
            else
            {
                wrong++;
            }
        };
        sub.OnBatchEnd = () =>
        {
            Volatile.Write(ref lastTicks, Stopwatch.GetTimestamp());
        };
        sub.StartReader();

        RawConnection? natsPub = null;
        MqttConnection? mqttPub = null;
        try
        {
            byte[] frame;
            Action<ReadOnlySpan<byte>> send;
            if (NatsPublisher)
            {
                natsPub = run.ConnectRaw("xpub");
                frame = Frames.Pub(topic.Replace('/', '.'), null, PayloadSize);
                send = natsPub.Send;
            }
            else
            {
                var pub = mqttPub = MqttConnection.Connect(ep.Host, mqttPort, $"lbpub{settings.RunId}", webSocket: WebSocket, v5: v5);
                frame = MqttConnection.EncodePublish(topic, PayloadSize, Qos, v5);
                send = pub.Send;
                if (Qos > 0)
                {
                    // PUBACKs are read (and dropped) so they never back up; each PUBLISH gets its own packet id.
                    pub.StartReader();
                    var idOffset = MqttConnection.PacketIdOffset(frame, topic);
                    var frameLength = frame.Length;
                    ushort nextId = 0;
                    send = chunk =>
                    {
                        var ids = chunk.ToArray();
                        for (int at = 0; at + frameLength <= ids.Length; at += frameLength)
                        {
                            nextId = nextId == ushort.MaxValue ? (ushort)1 : (ushort)(nextId + 1);
                            ids[at + idOffset] = (byte)(nextId >> 8);
                            ids[at + idOffset + 1] = (byte)nextId;
                        }

                        pub.Send(ids);
                    };
                }
            }

            long start = Stopwatch.GetTimestamp();
            long sent = await Task.Factory.StartNew(
                () => Blast(send, frame, settings, start, () => sub.Closed || run.Broken),
                TaskCreationOptions.LongRunning);
            long got = await Drain.UntilAsync(() => Volatile.Read(ref count), sent, run);
            if (wrong > 0)
            {
                throw new RowFailedException($"{wrong} deliveries had the wrong payload size");
            }

            double seconds = (Math.Max(Volatile.Read(ref lastTicks), start + 1) - start) / (double)Stopwatch.Frequency;
            return new Measurement(got, seconds, sent);
        }
        finally
        {
            mqttPub?.Dispose();
            sub.Dispose();
        }
    }

    private static long Blast(Action<ReadOnlySpan<byte>> send, byte[] frame, RunSettings settings, long start, Func<bool> broken)
    {
        var (chunk, per) = Frames.Chunk(frame);
        long deadline = settings.DeadlineFrom(start);
        long sent = 0;
        while (!broken())
        {
            int n = per;
            if (settings.CountMode)
            {
                long left = settings.Count - sent;
                if (left <= 0)
                {
                    break;
                }

                n = (int)Math.Min(per, left);
            }
            else if (Stopwatch.GetTimestamp() >= deadline)
            {
                break;
            }

            send(chunk.AsSpan(0, n * frame.Length));
            sent += n;
        }

        return sent;
    }
}
