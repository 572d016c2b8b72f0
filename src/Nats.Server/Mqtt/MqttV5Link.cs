namespace Nats.Server.Mqtt;

/// <summary>
/// What an MQTT 5 connection negotiated in CONNECT/CONNACK and the state it keeps for it: the client's maximum
/// packet size (nothing larger is sent to it), its topic aliases, and the QoS 1/2 PUBLISHes it has in flight
/// towards us, held under our Receive Maximum (one more is a DISCONNECT 0x93).
/// </summary>
internal sealed class MqttV5Link(MqttConnect connect, ushort receiveMaximum, uint maximumPacketSize)
{
    private readonly Lock _lock = new();
    private readonly HashSet<ushort> _qos2 = [];
    private int _qos1;

    public MqttConnect Connect { get; } = connect;

    public MqttTopicAliases Aliases { get; } = new();

    /// <summary>Our aliases towards the client; null when its CONNECT allowed none.</summary>
    public MqttOutboundAliases? OutboundAliases { get; } = connect.TopicAliasMaximum > 0 ? new MqttOutboundAliases(connect.TopicAliasMaximum) : null;

    /// <summary>Our Receive Maximum (CONNACK).</summary>
    public ushort ReceiveMaximum { get; } = receiveMaximum;

    /// <summary>Our Maximum Packet Size (CONNACK): a larger packet from the client is a DISCONNECT 0x95.</summary>
    public uint MaximumPacketSize { get; } = maximumPacketSize;

    /// <summary>The client's Maximum Packet Size (0: none).</summary>
    public uint ClientMaximumPacketSize => Connect.MaximumPacketSize;

    /// <summary>The session expiry, which a DISCONNECT may change.</summary>
    public uint SessionExpiry { get; set; } = connect.SessionExpiry;

    /// <summary>Counts an incoming QoS 1/2 PUBLISH; throws when it is one more than our Receive Maximum allows.</summary>
    public void Received(byte qos, ushort packetId)
    {
        lock (_lock)
        {
            if (qos == 2 && _qos2.Contains(packetId))
            {
                return;
            }
            if (_qos1 + _qos2.Count >= ReceiveMaximum)
            {
                throw new MqttProtocolException($"more than {ReceiveMaximum} QoS 1/2 publishes in flight", reason: MqttReasonCodes.ReceiveMaximumExceeded);
            }
            if (qos == 1)
            {
                _qos1++;
            }
            else
            {
                _qos2.Add(packetId);
            }
        }
    }

    /// <summary>A PUBACK went out (QoS 1 done).</summary>
    public void PubAckSent()
    {
        lock (_lock)
        {
            if (_qos1 > 0)
            {
                _qos1--;
            }
        }
    }

    /// <summary>A PUBCOMP went out (QoS 2 done).</summary>
    public void PubCompSent(ushort packetId)
    {
        lock (_lock)
        {
            _qos2.Remove(packetId);
        }
    }

    /// <summary>Whether a packet of <paramref name="size"/> bytes may go to the client.</summary>
    public bool Fits(int size) => ClientMaximumPacketSize == 0 || (uint)size <= ClientMaximumPacketSize;
}
