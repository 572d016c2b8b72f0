namespace Nats.Server.Mqtt;

/// <summary>
/// The topic aliases an MQTT 5 client set on one connection (specification 3.3.2.3.4): a PUBLISH with a topic
/// and an alias (re)binds the alias, one with an empty topic uses it. Aliases live as long as the connection.
/// </summary>
internal sealed class MqttTopicAliases
{
    /// <summary>The Topic Alias Maximum in our CONNACK.</summary>
    public const ushort Maximum = 64;

    private readonly byte[]?[] _topics = new byte[]?[Maximum + 1];

    public ReadOnlySpan<byte> Resolve(ushort alias, ReadOnlySpan<byte> topic)
    {
        if (alias > Maximum)
        {
            throw new MqttProtocolException($"topic alias {alias} above the maximum {Maximum}", reason: MqttReasonCodes.TopicAliasInvalid);
        }
        if (!topic.IsEmpty)
        {
            var held = _topics[alias];
            if (held is null || !topic.SequenceEqual(held))
            {
                _topics[alias] = topic.ToArray();
            }
            return topic;
        }
        return _topics[alias] ?? throw new MqttProtocolException($"topic alias {alias} is not set", reason: MqttReasonCodes.ProtocolError);
    }
}
