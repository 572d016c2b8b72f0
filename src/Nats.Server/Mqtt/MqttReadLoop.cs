using System.Buffers;
using Nats.Server.Hosting;
using Nats.Server.Transport;

namespace Nats.Server.Mqtt;

/// <summary>
/// The inbound pump of an MQTT connection (Go's mqttParse over its read loop): receives into a pooled
/// buffer, splits off each complete packet in place (the first must be CONNECT; the remaining length,
/// MQTT 5's maximum packet size and max_payload are checked from the fixed header, before the body is
/// read), dispatches it, and flushes what the packets published once per receive. When a publish took a
/// subscriber past its stall threshold it stops parsing and awaits that subscriber, as a NATS client's
/// read loop does; no thread is held.
/// </summary>
internal sealed class MqttReadLoop(MqttConnection connection, ClientTransport transport, MqttPacketDispatcher dispatcher, NatsServer server)
{
    private const int InitialSize = 16 * 1024;
    private const int MinimumRead = 4096;

    private byte[] _buffer = [];
    private int _start;
    private int _end;

    /// <summary>Reads until the client disconnects (the reason) or the connection fails (an exception).</summary>
    public async Task<Clients.ClosedReason> RunAsync()
    {
        _buffer = ArrayPool<byte>.Shared.Rent(InitialSize);
        try
        {
            while (true)
            {
                var needed = Parse(out var disconnected, out var stalled);
                connection.Session?.FlushPublished();
                if (disconnected)
                {
                    return Clients.ClosedReason.ClientClosed;
                }
                if (connection.IsClosed)
                {
                    return connection.ClosedReason;
                }
                if (stalled)
                {
                    // A subscriber we fed is full: the rest of the buffer waits until it has drained, as a NATS publisher's does.
                    while (connection.Session?.Publisher is { StallPending: true } publisher && !connection.IsClosed)
                    {
                        await publisher.WaitForStallsAsync().ConfigureAwait(false);
                    }
                    continue;
                }
                MakeRoom(needed);
                var received = await transport.ReceiveAsync(_buffer.AsMemory(_end), CancellationToken.None).ConfigureAwait(false);
                if (received == 0)
                {
                    return connection.IsClosed ? connection.ClosedReason : Clients.ClosedReason.ClientClosed;
                }
                _end += received;
                connection.NoteRead();
            }
        }
        finally
        {
            var buffer = _buffer;
            _buffer = [];
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Dispatches every complete packet buffered; returns the size the next packet needs in the buffer.</summary>
    private int Parse(out bool disconnected, out bool stalled)
    {
        disconnected = false;
        stalled = false;
        while (_end > _start)
        {
            var available = _buffer.AsSpan(_start, _end - _start);
            var header = available[0];
            var type = (byte)(header & MqttPackets.TypeMask);
            if (connection.Connect is null && type != MqttPackets.Connect)
            {
                throw new MqttProtocolException($"the first packet should be a CONNECT ({MqttPackets.Connect}), got {type}");
            }
            var position = MqttDecoder.ReadRemainingLength(available[..Math.Min(available.Length, MqttDecoder.MaxFixedHeader)], out var length);
            if (position == 0)
            {
                return MqttDecoder.MaxFixedHeader;
            }
            if (connection.V5 is { } v5 && (uint)(position + length) > v5.MaximumPacketSize)
            {
                throw new MqttProtocolException($"packet of {position + length} bytes over the maximum packet size {v5.MaximumPacketSize}",
                    reason: MqttReasonCodes.PacketTooLarge);
            }
            if (type == MqttPackets.Publish && length > server.Options.MaxPayload + 65536 + 4)
            {
                // Go 2.9.10 buffers any size; we refuse what cannot be a max_payload message plus a topic.
                throw new MqttProtocolException("maximum payload exceeded");
            }
            if (available.Length < position + length)
            {
                return position + length;
            }
            _start += position + length;
            if (!dispatcher.Dispatch(header, available.Slice(position, length)))
            {
                disconnected = true;
                return 0;
            }
            if (connection.Session?.Publisher.StallPending == true)
            {
                stalled = true;
                return 0;
            }
        }
        return 0;
    }

    /// <summary>Moves the unparsed tail to the front and grows the buffer when the next packet is larger.</summary>
    private void MakeRoom(int needed)
    {
        var pending = _end - _start;
        if (pending == 0)
        {
            _start = _end = 0;
        }
        // Room for at least a few KiB more, so a tail near the end is not read a few bytes at a time.
        var wanted = Math.Max(needed, pending + MinimumRead);
        if (wanted > _buffer.Length)
        {
            var grown = ArrayPool<byte>.Shared.Rent(Math.Max(wanted, _buffer.Length * 2));
            _buffer.AsSpan(_start, pending).CopyTo(grown);
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = grown;
            _start = 0;
            _end = pending;
        }
        else if (_buffer.Length - _start < wanted)
        {
            _buffer.AsSpan(_start, pending).CopyTo(_buffer);
            _start = 0;
            _end = pending;
        }
    }
}
