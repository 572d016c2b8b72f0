using System.Text;

namespace Nats.Server.Mqtt;

/// <summary>A will message from CONNECT, with its topic already mapped to a subject.</summary>
internal sealed record MqttWill(byte[] Topic, string Subject, byte[] Message, byte Qos, bool Retain);

/// <summary>A parsed CONNECT packet (Go's mqttParseConnect, in its validation order and texts).</summary>
internal sealed class MqttConnect
{
    private const byte FlagReserved = 0x01;
    private const byte FlagCleanSession = 0x02;
    private const byte FlagWill = 0x04;
    private const byte FlagWillQos = 0x18;
    private const byte FlagWillRetain = 0x20;
    private const byte FlagPassword = 0x40;
    private const byte FlagUsername = 0x80;

    public required string ClientId { get; init; }
    public bool CleanSession { get; init; }
    public ushort KeepAlive { get; init; }
    public MqttWill? Will { get; init; }
    public string? Username { get; init; }
    public string? Password { get; init; }

    /// <summary>Go's read deadline: 1.5 times the keep-alive, in whole seconds; zero when keep-alive is off.</summary>
    public TimeSpan ReadDeadline => KeepAlive == 0 ? TimeSpan.Zero : TimeSpan.FromSeconds((long)(KeepAlive * 1.5));

    /// <summary>Parses CONNECT; a refusal that has a CONNACK code carries it in the exception.</summary>
    public static MqttConnect Parse(ReadOnlySpan<byte> packet, Func<string> newClientId)
    {
        var r = new MqttReader(packet);
        var proto = r.ReadBytes("protocol name");
        if (!proto.SequenceEqual("MQTT"u8))
        {
            if (proto.SequenceEqual("MQIsdp"u8))
            {
                throw new MqttProtocolException($"older protocol {Auth.GoQuote.Quote(proto.ToArray())} not supported");
            }
            throw new MqttProtocolException($"expected connect packet with protocol name \"MQTT\", got {Auth.GoQuote.Quote(proto.ToArray())}");
        }
        var level = r.ReadByte("protocol level");
        if (level != 4)
        {
            throw new MqttProtocolException($"unacceptable protocol version of {level}", MqttPackets.RcUnacceptableProtocol);
        }
        var flags = r.ReadByte("flags");
        if ((flags & FlagReserved) != 0)
        {
            throw new MqttProtocolException("connect flags reserved bit not set to 0");
        }
        var willQos = (byte)((flags & FlagWillQos) >> 3);
        var willRetain = (flags & FlagWillRetain) != 0;
        var hasWill = (flags & FlagWill) != 0;
        if (!hasWill)
        {
            if (willQos != 0)
            {
                throw new MqttProtocolException($"if Will flag is set to 0, Will QoS must be 0 too, got {willQos}");
            }
            if (willRetain)
            {
                throw new MqttProtocolException("if Will flag is set to 0, Will Retain flag must be 0 too");
            }
        }
        else if (willQos == 3)
        {
            throw new MqttProtocolException($"if Will flag is set to 1, Will QoS can be 0, 1 or 2, got {willQos}");
        }
        var hasUser = (flags & FlagUsername) != 0;
        var hasPassword = (flags & FlagPassword) != 0;
        if (!hasUser && hasPassword)
        {
            throw new MqttProtocolException("password flag set but username flag is not");
        }
        var keepAlive = r.ReadUInt16("keep alive");
        var clean = (flags & FlagCleanSession) != 0;
        var idBytes = r.ReadBytes("client ID");
        string clientId;
        if (idBytes.IsEmpty)
        {
            if (!clean)
            {
                throw new MqttProtocolException("when client ID is empty, clean session flag must be set to 1", MqttPackets.RcIdentifierRejected);
            }
            clientId = newClientId();
        }
        else if (!System.Text.Unicode.Utf8.IsValid(idBytes))
        {
            throw new MqttProtocolException($"invalid utf8 for client ID: {Auth.GoQuote.Quote(idBytes.ToArray())}", MqttPackets.RcIdentifierRejected);
        }
        else
        {
            clientId = Encoding.UTF8.GetString(idBytes);
        }

        MqttWill? will = null;
        if (hasWill)
        {
            var topic = r.ReadBytes("Will topic");
            if (topic.IsEmpty)
            {
                throw new MqttProtocolException("empty Will topic not allowed");
            }
            if (!System.Text.Unicode.Utf8.IsValid(topic))
            {
                throw new MqttProtocolException($"invalid utf8 for Will topic {Auth.GoQuote.Quote(topic.ToArray())}");
            }
            var subject = MqttTopics.ToSubject(topic, wildcardsAllowed: false, out var error) ?? throw new MqttProtocolException(error!);
            var message = r.ReadBytes("Will message");
            will = new MqttWill(topic.ToArray(), subject, message.ToArray(), willQos, willRetain);
        }

        string? username = null;
        if (hasUser)
        {
            var user = r.ReadBytes("user name");
            if (user.IsEmpty)
            {
                throw new MqttProtocolException("empty user name not allowed", MqttPackets.RcBadUserOrPassword);
            }
            if (!System.Text.Unicode.Utf8.IsValid(user))
            {
                throw new MqttProtocolException($"invalid utf8 for user name {Auth.GoQuote.Quote(user.ToArray())}", MqttPackets.RcBadUserOrPassword);
            }
            username = Encoding.UTF8.GetString(user);
        }
        string? password = null;
        if (hasPassword)
        {
            password = Encoding.UTF8.GetString(r.ReadBytes("password"));
        }
        return new MqttConnect
        {
            ClientId = clientId,
            CleanSession = clean,
            KeepAlive = keepAlive,
            Will = will,
            Username = username,
            Password = password,
        };
    }
}
