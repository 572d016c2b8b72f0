using System.Diagnostics;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// One MQTT QoS 0 subscriber; the publisher is either an MQTT client (pure MQTT row) or a NATS
/// client publishing to the mapped subject (cross-protocol row: NATS "a.b" is MQTT "a/b").
/// </summary>
internal sealed class MqttScenario : Scenario
{
    public bool NatsPublisher { get; init; }

    public override Measurement Run(Endpoint ep, RunSettings s)
    {
        if (ep.MqttPort == 0)
        {
            throw new SetupException("no MQTT listener configured");
        }

        string topic = $"bench/mqtt/{s.RunId}";
        using var sub = Setup("MQTT subscriber", () =>
        {
            var c = MqttConnection.Connect(ep.Host, ep.MqttPort, $"lbsub{s.RunId}");
            c.Subscribe(topic);
            return c;
        });
        var counter = new CountingHandler(PayloadSize);
        sub.OnPublish = counter.OnPayload;
        sub.OnBatchEnd = counter.OnBatchEnd;
        sub.StartReader();

        NatsConnection? natsPub = null;
        MqttConnection? mqttPub = null;
        try
        {
            SendBytes send;
            byte[] frame;
            if (NatsPublisher)
            {
                natsPub = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, "loadbench-xpub");
                send = natsPub.Send;
                frame = Frames.Pub(topic.Replace('/', '.'), null, PayloadSize);
            }
            else
            {
                mqttPub = Setup("MQTT publisher", () => MqttConnection.Connect(ep.Host, ep.MqttPort, $"lbpub{s.RunId}"));
                send = mqttPub.Send;
                frame = MqttConnection.EncodePublish(topic, PayloadSize);
            }

            var gate = new FlowGate(1, FlowGate.WindowFor(frame.Length), () => counter.Count, () => sub.Closed);
            long start = Stopwatch.GetTimestamp();
            long sent = Blaster.Run(send, frame, s, start, gate);
            long got = Drain.Wait(() => counter.Count, sent, () => sub.Closed);
            double seconds = (Math.Max(counter.LastTicks, start + 1) - start) / (double)Stopwatch.Frequency;
            return new Measurement(got + counter.WrongSize, seconds, sent);
        }
        finally
        {
            natsPub?.Dispose();
            mqttPub?.Dispose();
        }
    }
}
