using System.Buffers.Binary;

namespace Nats.Server.Mqtt;

/// <summary>Reads the fields of one packet's variable header and payload, with Go's error texts.</summary>
internal ref struct MqttReader(ReadOnlySpan<byte> packet)
{
    private readonly ReadOnlySpan<byte> _buffer = packet;

    public int Position;

    public readonly bool HasMore => Position < _buffer.Length;

    public readonly int Remaining => _buffer.Length - Position;

    public byte ReadByte(string field)
    {
        if (Position >= _buffer.Length)
        {
            throw new MqttProtocolException($"error reading {field}: EOF");
        }
        return _buffer[Position++];
    }

    public ushort ReadUInt16(string field)
    {
        if (_buffer.Length - Position < 2)
        {
            throw new MqttProtocolException($"error reading {field}: unexpected EOF");
        }
        var value = BinaryPrimitives.ReadUInt16BigEndian(_buffer[Position..]);
        Position += 2;
        return value;
    }

    public ReadOnlySpan<byte> ReadBytes(string field)
    {
        var length = ReadUInt16(field);
        if (Position + length > _buffer.Length)
        {
            throw new MqttProtocolException($"error reading {field}: unexpected EOF");
        }
        var value = _buffer.Slice(Position, length);
        Position += length;
        return value;
    }

    /// <summary>An MQTT 5 variable byte integer (at most four bytes).</summary>
    public int ReadVarInt(string field)
    {
        var value = 0;
        for (var i = 0; i < 4; i++)
        {
            var b = ReadByte(field);
            value |= (b & 0x7f) << (7 * i);
            if ((b & 0x80) == 0)
            {
                return value;
            }
        }
        throw new MqttProtocolException($"malformed variable int in {field}");
    }

    public uint ReadUInt32(string field)
    {
        if (_buffer.Length - Position < 4)
        {
            throw new MqttProtocolException($"error reading {field}: unexpected EOF");
        }
        var value = BinaryPrimitives.ReadUInt32BigEndian(_buffer[Position..]);
        Position += 4;
        return value;
    }

    /// <summary>An MQTT 5 property section: its length, then that many bytes.</summary>
    public ReadOnlySpan<byte> ReadProperties()
    {
        var length = ReadVarInt("properties length");
        if (length > _buffer.Length - Position)
        {
            throw new MqttProtocolException("error reading properties: unexpected EOF");
        }
        var value = _buffer.Slice(Position, length);
        Position += length;
        return value;
    }

    public ReadOnlySpan<byte> Rest()
    {
        var rest = _buffer[Position..];
        Position = _buffer.Length;
        return rest;
    }
}

/// <summary>A protocol violation: the connection is closed and the text logged, as Go's mqttParse errors do.</summary>
internal class MqttProtocolException(string message, byte connAckCode = 0, byte reason = MqttReasonCodes.MalformedPacket) : Exception(message)
{
    /// <summary>Non-zero when a CONNACK with this code goes out before the connection is closed.</summary>
    public byte ConnAckCode { get; } = connAckCode;

    /// <summary>The MQTT 5 reason code of the DISCONNECT (or CONNACK) an MQTT 5 client gets for it.</summary>
    public byte Reason { get; } = reason;
}

/// <summary>A client id that moved between connections within the jail time: the connection waits <see cref="Jail"/>, then closes.</summary>
internal sealed class MqttFlappingException(string clientId, TimeSpan jail) : MqttProtocolException($"duplicate client ID {clientId} flapping")
{
    public TimeSpan Jail { get; } = jail;
}
