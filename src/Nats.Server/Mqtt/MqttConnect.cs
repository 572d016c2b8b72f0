using System.Text;

namespace Nats.Server.Mqtt;

/// <summary>A will message from CONNECT, with its topic already mapped to a subject.</summary>
internal sealed record MqttWill(byte[] Topic, string Subject, byte[] Message, byte Qos, bool Retain)
{
    /// <summary>MQTT 5: the will's properties as NATS header lines (MqttV5Headers), its delay interval in seconds.</summary>
    public byte[] Lines { get; init; } = [];

    public uint Delay { get; init; }
}

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

    /// <summary>4 (3.1.1) or 5.</summary>
    public byte Level { get; init; } = 4;

    public bool IsV5 => Level == 5;

    /// <summary>The session ends with the connection: 3.1.1's clean session, MQTT 5's session expiry 0 (clean start is <see cref="CleanSession"/>).</summary>
    public bool EndsWithConnection => IsV5 ? SessionExpiry == 0 : CleanSession;

    /// <summary>MQTT 5 CONNECT properties (defaults as the specification gives them when absent).</summary>
    public uint SessionExpiry { get; init; }
    public ushort ReceiveMaximum { get; init; } = ushort.MaxValue;
    public uint MaximumPacketSize { get; init; }
    public ushort TopicAliasMaximum { get; init; }
    public bool RequestProblemInfo { get; init; } = true;

    /// <summary>MQTT 5 Request Response Information: CONNACK then names a topic prefix for the client's responses.</summary>
    public bool RequestResponseInfo { get; init; }

    /// <summary>MQTT 5: the client sent an empty client id and CONNACK tells it the one assigned.</summary>
    public bool AssignedClientId { get; init; }

    /// <summary>Go's read deadline: 1.5 times the keep-alive, in whole seconds; zero when keep-alive is off.</summary>
    public TimeSpan ReadDeadline => DeadlineFor(KeepAlive);

    /// <summary>The read deadline of a keep-alive of <paramref name="keepAlive"/> seconds (the client's, or MQTT 5's Server Keep Alive).</summary>
    public static TimeSpan DeadlineFor(ushort keepAlive) => keepAlive == 0 ? TimeSpan.Zero : TimeSpan.FromSeconds((long)(keepAlive * 1.5));

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
        if (level is not (4 or 5))
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
        var v5 = level == 5 ? MqttConnectProperties.Parse(r.ReadProperties()) : new MqttConnectProperties();
        var idBytes = r.ReadBytes("client ID");
        string clientId;
        if (idBytes.IsEmpty)
        {
            if (!clean && level == 4)
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
            var lines = Array.Empty<byte>();
            uint delay = 0;
            if (level == 5)
            {
                var properties = MqttMessageProperties.Parse(r.ReadProperties(), MqttProperties.InWill, "will properties");
                delay = properties.WillDelay;
                var scratch = new byte[MqttV5Headers.MaxLinesSize(properties)];
                lines = scratch.AsSpan(0, MqttV5Headers.AppendLines(properties, scratch, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds())).ToArray();
            }
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
            will = new MqttWill(topic.ToArray(), subject, message.ToArray(), willQos, willRetain) { Lines = lines, Delay = delay };
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
            Level = level,
            SessionExpiry = v5.SessionExpiry,
            ReceiveMaximum = v5.ReceiveMaximum,
            MaximumPacketSize = v5.MaximumPacketSize,
            TopicAliasMaximum = v5.TopicAliasMaximum,
            RequestProblemInfo = v5.RequestProblemInfo,
            RequestResponseInfo = v5.RequestResponseInfo,
            AssignedClientId = level == 5 && idBytes.IsEmpty,
        };
    }
}

/// <summary>The MQTT 5 CONNECT properties the server acts on.</summary>
internal readonly struct MqttConnectProperties()
{
    public uint SessionExpiry { get; init; }
    public ushort ReceiveMaximum { get; init; } = ushort.MaxValue;
    public uint MaximumPacketSize { get; init; }
    public ushort TopicAliasMaximum { get; init; }
    public bool RequestProblemInfo { get; init; } = true;
    public bool RequestResponseInfo { get; init; }

    public static MqttConnectProperties Parse(ReadOnlySpan<byte> section)
    {
        var result = new MqttConnectProperties();
        var reader = new MqttPropertyReader(section, MqttProperties.InConnect, "CONNECT");
        while (reader.Next(out var property))
        {
            switch (property.Id)
            {
                case MqttProperties.SessionExpiry:
                    result = result with { SessionExpiry = property.Number };
                    break;
                case MqttProperties.ReceiveMaximum:
                    result = result with
                    {
                        ReceiveMaximum = property.Number != 0 ? (ushort)property.Number
                            : throw new MqttProtocolException("receive maximum cannot be 0", reason: MqttReasonCodes.ProtocolError),
                    };
                    break;
                case MqttProperties.MaximumPacketSize:
                    result = result with
                    {
                        MaximumPacketSize = property.Number != 0 ? property.Number
                            : throw new MqttProtocolException("maximum packet size cannot be 0", reason: MqttReasonCodes.ProtocolError),
                    };
                    break;
                case MqttProperties.TopicAliasMaximum:
                    result = result with { TopicAliasMaximum = (ushort)property.Number };
                    break;
                case MqttProperties.RequestProblemInfo:
                    result = result with { RequestProblemInfo = property.Number == 1 };
                    break;
                case MqttProperties.RequestResponseInfo:
                    result = result with { RequestResponseInfo = property.Number == 1 };
                    break;
                case MqttProperties.AuthenticationMethod:
                    // Enhanced authentication (AUTH exchanges) is not offered: CONNACK 0x8C [MQTT-4.12.0-1].
                    throw new MqttProtocolException($"authentication method {System.Text.Encoding.UTF8.GetString(property.Value)} not supported",
                        reason: MqttReasonCodes.BadAuthenticationMethod);
            }
        }
        return result;
    }
}
