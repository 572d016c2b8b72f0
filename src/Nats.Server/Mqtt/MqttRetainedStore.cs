using System.Collections.Concurrent;
using System.Text;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Mqtt;

/// <summary>A retained message: the last retained PUBLISH on its topic.</summary>
/// <remarks><see cref="Headers"/>: the NATS header block of an MQTT 5 message's properties (MqttV5Headers), empty otherwise.</remarks>
internal sealed record MqttRetainedMessage(string Subject, byte[] Topic, byte[] Payload, byte Qos, byte[] Headers);

/// <summary>
/// Retained messages of one account, keyed by subject (Go keeps them in <c>$MQTT_rmsgs</c> and an
/// in-memory map it serves subscriptions from; this is that map).
/// </summary>
internal sealed class MqttRetainedStore
{
    private readonly ConcurrentDictionary<string, MqttRetainedMessage> _messages = new(StringComparer.Ordinal);

    public int Count => _messages.Count;

    /// <summary>
    /// Held by a retained PUBLISH across storing it and its live fan-out, and by a SUBSCRIBE across adding its
    /// filters and sending their retained messages: a subscription racing a retained publish then gets that
    /// message exactly once (live or retained, never both, never neither) and never an older retained value
    /// after a newer live one. Plain publishes do not take it.
    /// </summary>
    public Lock Gate { get; } = new();

    /// <summary>Sets or replaces; an empty payload clears the topic's retained message, as MQTT says.</summary>
    public void Set(string subject, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ReadOnlySpan<byte> lines = default)
    {
        if (payload.IsEmpty)
        {
            _messages.TryRemove(subject, out _);
            return;
        }
        byte[] headers = lines.IsEmpty ? [] : [.. "NATS/1.0\r\n"u8, .. lines, .. "\r\n"u8];
        _messages[subject] = new MqttRetainedMessage(subject, topic.ToArray(), payload.ToArray(), qos, headers);
    }

    /// <summary>Drops a retained message whose MQTT 5 message expiry has passed.</summary>
    public void Expired(MqttRetainedMessage message) => _messages.TryRemove(KeyValuePair.Create(message.Subject, message));

    public IEnumerable<MqttRetainedMessage> Matching(string filter)
    {
        var filterBytes = Encoding.UTF8.GetBytes(filter);
        foreach (var message in _messages.Values)
        {
            if (SubjectRules.Matches(Encoding.UTF8.GetBytes(message.Subject), filterBytes))
            {
                yield return message;
            }
        }
    }
}
