using System.Net.Sockets;
using System.Text;

namespace Nats.LoadBench.Client;

/// <summary>
/// Minimal MQTT 3.1.1 or MQTT 5 client: CONNECT (clean session / clean start), SUBSCRIBE and PUBLISH at
/// QoS 0 or 1 (MQTT 5: with an empty property section), and a receive loop that counts PUBLISH packets by
/// their remaining-length field (answering QoS 1 ones with PUBACKs, one write per socket read) and PUBACKs.
/// </summary>
internal sealed class MqttConnection : IDisposable
{
    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly byte[] _buf = new byte[1 << 20];
    private int _start;
    private int _end;
    private Thread? _reader;
    private volatile bool _disposed;

    private MqttConnection(Socket socket, Stream stream)
    {
        _socket = socket;
        _stream = stream;
    }

    /// <summary>Called per PUBLISH with its payload length, then once per socket read.</summary>
    public Action<int>? OnPublish { get; set; }

    public Action? OnBatchEnd { get; set; }

    /// <summary>Called per PUBACK received (a QoS 1 publisher's acknowledgements).</summary>
    public Action? OnPubAck { get; set; }

    private byte[] _acks = new byte[4096];
    private int _acksLength;

    public bool Closed { get; private set; }

    /// <summary>Speaks MQTT 5 (property sections in CONNECT, SUBSCRIBE, PUBLISH).</summary>
    public bool V5 { get; private set; }

    /// <summary>Connects to an MQTT port, or with <paramref name="webSocket"/> to a websocket port's /mqtt path.</summary>
    public static MqttConnection Connect(string host, int port, string clientId, int timeoutMs = 10_000, bool webSocket = false, bool v5 = false)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, SendBufferSize = 4 << 20, ReceiveBufferSize = 4 << 20 };
        socket.ReceiveTimeout = timeoutMs;
        try
        {
            socket.Connect(host, port);
        }
        catch (SocketException ex)
        {
            socket.Dispose();
            throw new SetupException($"MQTT connect {host}:{port} failed: {ex.SocketErrorCode}", ex);
        }

        Stream stream = new NetworkStream(socket, ownsSocket: false);
        if (webSocket)
        {
            try
            {
                stream = WebSocketStream.Upgrade(stream, host, port, "/mqtt", "mqtt");
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }

        var conn = new MqttConnection(socket, stream) { V5 = v5 };
        try
        {
            var id = Encoding.UTF8.GetBytes(clientId);
            var body = new List<byte> { 0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', (byte)(v5 ? 5 : 4), 0x02, 0, 60 };
            if (v5)
            {
                body.Add(0); // no CONNECT properties
            }

            body.Add((byte)(id.Length >> 8));
            body.Add((byte)id.Length);
            body.AddRange(id);
            conn._stream.Write(Packet(0x10, body.ToArray()));
            var (type, payload) = conn.ReadPacket();
            if (type != 2 || payload.Length < 2 || payload[1] != 0)
            {
                throw new SetupException($"MQTT CONNACK refused (type {type}, rc {(payload.Length > 1 ? payload[1] : -1)})");
            }
        }
        catch (Exception ex)
        {
            conn.Dispose();
            throw ex as SetupException ?? new SetupException("MQTT handshake failed: " + ex.Message, ex);
        }

        return conn;
    }

    public void Subscribe(string topic, byte qos = 0)
    {
        var t = Encoding.UTF8.GetBytes(topic);
        var body = new List<byte> { 0, 1 };
        if (V5)
        {
            body.Add(0); // no SUBSCRIBE properties
        }

        body.Add((byte)(t.Length >> 8));
        body.Add((byte)t.Length);
        body.AddRange(t);
        body.Add(qos);
        _stream.Write(Packet(0x82, body.ToArray()));
        var (type, payload) = ReadPacket();
        // MQTT 5's SUBACK has a property section (empty from us) before the reason codes.
        var code = V5 ? 3 : 2;
        if (type != 9 || payload.Length <= code || payload[code] >= 0x80)
        {
            throw new SetupException("MQTT SUBACK refused");
        }
    }

    /// <summary>A PUBLISH; at QoS 1 its packet id (2 bytes, see <see cref="PacketIdOffset"/>) is set per send.</summary>
    public static byte[] EncodePublish(string topic, int payloadSize, byte qos = 0, bool v5 = false)
    {
        var t = Encoding.UTF8.GetBytes(topic);
        var idLength = qos > 0 ? 2 : 0;
        // MQTT 5: one byte of property length (0) after the packet id; the body around it is the same.
        var properties = v5 ? 1 : 0;
        var body = new byte[2 + t.Length + idLength + properties + payloadSize];
        body[0] = (byte)(t.Length >> 8);
        body[1] = (byte)t.Length;
        t.CopyTo(body, 2);
        body.AsSpan(2 + t.Length + idLength + properties).Fill((byte)'x');
        return Packet((byte)(0x30 | (qos << 1)), body);
    }

    /// <summary>Where a QoS 1 PUBLISH made by <see cref="EncodePublish"/> holds its packet id.</summary>
    public static int PacketIdOffset(byte[] frame, string topic)
    {
        int i = 1;
        while ((frame[i] & 0x80) != 0)
        {
            i++;
        }

        return i + 1 + 2 + Encoding.UTF8.GetByteCount(topic);
    }

    public void Send(ReadOnlySpan<byte> data) => _stream.Write(data);

    /// <summary>Round trip a PINGREQ so everything sent before it has been read by the server.</summary>
    public void Ping(int timeoutMs = 30_000)
    {
        _socket.ReceiveTimeout = timeoutMs;
        _stream.Write([0xC0, 0]);
        while (true)
        {
            var (type, _) = ReadPacket();
            if (type == 13)
            {
                return;
            }
        }
    }

    private static byte[] Packet(byte first, byte[] body)
    {
        var head = new List<byte> { first };
        int len = body.Length;
        do
        {
            byte b = (byte)(len % 128);
            len /= 128;
            head.Add(len > 0 ? (byte)(b | 0x80) : b);
        }
        while (len > 0);
        head.AddRange(body);
        return head.ToArray();
    }

    /// <summary>Synchronous single-packet read used only during setup.</summary>
    private (int Type, byte[] Payload) ReadPacket()
    {
        while (true)
        {
            if (TryFrame(out int type, out int bodyStart, out int bodyLen))
            {
                var payload = _buf.AsSpan(bodyStart, bodyLen).ToArray();
                _start = bodyStart + bodyLen;
                return (type, payload);
            }

            Fill();
        }
    }

    private void Fill()
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buf, _start, _buf, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        int n = _stream.Read(_buf, _end, _buf.Length - _end);
        if (n <= 0)
        {
            Closed = true;
            throw new IOException("MQTT connection closed by server");
        }

        _end += n;
    }

    private bool TryFrame(out int type, out int bodyStart, out int bodyLen)
    {
        type = bodyStart = bodyLen = 0;
        int avail = _end - _start;
        if (avail < 2)
        {
            return false;
        }

        int len = 0;
        int mul = 1;
        int i = _start + 1;
        while (true)
        {
            if (i >= _end)
            {
                return false;
            }

            byte b = _buf[i++];
            len += (b & 0x7F) * mul;
            if ((b & 0x80) == 0)
            {
                break;
            }

            mul *= 128;
        }

        if (_end - i < len)
        {
            return false;
        }

        type = _buf[_start] >> 4;
        bodyStart = i;
        bodyLen = len;
        return true;
    }

    public void StartReader()
    {
        _socket.ReceiveTimeout = 0;
        _reader = new Thread(ReadLoop) { IsBackground = true, Name = "loadbench-mqtt" };
        _reader.Start();
    }

    private void ReadLoop()
    {
        try
        {
            while (!_disposed)
            {
                while (TryFrame(out int type, out int bodyStart, out int bodyLen))
                {
                    if (type == 3)
                    {
                        // PUBLISH: topic length prefix, topic, packet id (QoS 1), payload.
                        int topicLen = (_buf[bodyStart] << 8) | _buf[bodyStart + 1];
                        int qos = (_buf[_start] >> 1) & 3;
                        if (qos > 0)
                        {
                            QueuePubAck(_buf[bodyStart + 2 + topicLen], _buf[bodyStart + 3 + topicLen]);
                        }

                        var header = 2 + topicLen + (qos > 0 ? 2 : 0);
                        if (V5)
                        {
                            // The property section: its variable-length size, then the properties.
                            int propertiesLength = 0, shift = 0, at = bodyStart + header;
                            byte b;
                            do
                            {
                                b = _buf[at++];
                                propertiesLength |= (b & 0x7F) << shift;
                                shift += 7;
                            }
                            while ((b & 0x80) != 0);
                            header = at - bodyStart + propertiesLength;
                        }

                        OnPublish?.Invoke(bodyLen - header);
                    }
                    else if (type == 4)
                    {
                        OnPubAck?.Invoke();
                    }

                    _start = bodyStart + bodyLen;
                }

                if (_acksLength > 0)
                {
                    _stream.Write(_acks, 0, _acksLength);
                    _acksLength = 0;
                }

                OnBatchEnd?.Invoke();
                Fill();
            }
        }
        catch (Exception)
        {
            Closed = true;
        }
    }

    private void QueuePubAck(byte high, byte low)
    {
        if (_acksLength + 4 > _acks.Length)
        {
            Array.Resize(ref _acks, _acks.Length * 2);
        }

        _acks[_acksLength++] = 0x40;
        _acks[_acksLength++] = 2;
        _acks[_acksLength++] = high;
        _acks[_acksLength++] = low;
    }

    public void Dispose()
    {
        _disposed = true;
        try
        {
            _stream.Write([0xE0, 0]);
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception)
        {
            // Best effort: the peer may already be gone.
        }

        _stream.Dispose();
        _socket.Dispose();
        _reader?.Join(5000);
    }
}
