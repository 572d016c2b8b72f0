using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Consumers;

/// <summary>Go's consumer advisories on <c>$JS.EVENT.ADVISORY.CONSUMER.…</c> (created/deleted, max deliveries, nak, terminated) and the sampled ack metric.</summary>
internal static class ConsumerAdvisories
{
    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static void Action(JsConsumer consumer, string action) =>
        Send(consumer, $"$JS.EVENT.ADVISORY.CONSUMER.{(action == "create" ? "CREATED" : "DELETED")}.{consumer.Stream.Name}.{consumer.Name}",
            "io.nats.jetstream.advisory.v1.consumer_action", json => json.WriteString("action", action));

    public static void MaxDeliveries(JsConsumer consumer, ulong sseq, ulong deliveries) =>
        Send(consumer, $"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{consumer.Stream.Name}.{consumer.Name}",
            "io.nats.jetstream.advisory.v1.max_deliver", json =>
            {
                json.WriteNumber("stream_seq", sseq);
                json.WriteNumber("deliveries", deliveries);
            });

    public static void Nak(JsConsumer consumer, ulong sseq, ulong dseq, ulong deliveries) =>
        Send(consumer, $"$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.{consumer.Stream.Name}.{consumer.Name}",
            "io.nats.jetstream.advisory.v1.nak", json => Sequences(json, sseq, dseq, deliveries));

    public static void Terminated(JsConsumer consumer, ulong sseq, ulong dseq, ulong deliveries) =>
        Send(consumer, $"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.{consumer.Stream.Name}.{consumer.Name}",
            "io.nats.jetstream.advisory.v1.terminated", json => Sequences(json, sseq, dseq, deliveries));

    /// <summary>Go's sampleAck: <c>io.nats.jetstream.metric.v1.consumer_ack</c>, <paramref name="ackTime"/> ns since the delivery.</summary>
    public static void AckMetric(JsConsumer consumer, ulong sseq, ulong dseq, ulong deliveries, long ackTime) =>
        Send(consumer, $"$JS.EVENT.METRIC.CONSUMER.ACK.{consumer.Stream.Name}.{consumer.Name}",
            "io.nats.jetstream.metric.v1.consumer_ack", json =>
            {
                json.WriteNumber("consumer_seq", dseq);
                json.WriteNumber("stream_seq", sseq);
                json.WriteNumber("ack_time", ackTime);
                json.WriteNumber("deliveries", deliveries);
            });

    private static void Sequences(Utf8JsonWriter json, ulong sseq, ulong dseq, ulong deliveries)
    {
        json.WriteNumber("consumer_seq", dseq);
        json.WriteNumber("stream_seq", sseq);
        json.WriteNumber("deliveries", deliveries);
    }

    private static void Send(JsConsumer consumer, string subject, string type, Action<Utf8JsonWriter> fields)
    {
        var service = consumer.Stream.Account.Service;
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("type", type);
            json.WriteString("id", Guid.NewGuid().ToString("N"));
            json.WriteString("timestamp", GoTime.Now().ToString());
            json.WriteString("stream", consumer.Stream.Name);
            json.WriteString("consumer", consumer.Name);
            fields(json);
            if (!string.IsNullOrEmpty(service.Options.Domain))
            {
                json.WriteString("domain", service.Options.Domain);
            }
            json.WriteEndObject();
        }
        service.Transport.Publish(consumer.Stream.Account.Account, subject, buffer.WrittenSpan);
    }
}
