using System.Net.Sockets;
using System.Text;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>A bare socket speaking hand-built MQTT packets, for bad input and exact bytes.</summary>
internal sealed class MqttRawClient : IAsyncDisposable
{
    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;

    private MqttRawClient(TcpClient tcp)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
    }

    public static async Task<MqttRawClient> ConnectAsync(int port)
    {
        var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", port);
        return new MqttRawClient(tcp);
    }

    public Task SendAsync(params byte[] bytes) => _stream.WriteAsync(bytes).AsTask();

    /// <summary>Reads exactly <paramref name="count"/> bytes (throws at end of stream).</summary>
    public async Task<byte[]> ReadAsync(int count)
    {
        var buffer = new byte[count];
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await _stream.ReadExactlyAsync(buffer, cts.Token);
        return buffer;
    }

    /// <summary>True when the server closes the connection (reads drain to end of stream).</summary>
    public async Task<bool> WaitClosedAsync()
    {
        var buffer = new byte[256];
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        try
        {
            while (await _stream.ReadAsync(buffer, cts.Token) > 0)
            {
            }
            return true;
        }
        catch (IOException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    public void Abort()
    {
        _tcp.Client.LingerState = new LingerOption(true, 0);
        _tcp.Close();
    }

    public ValueTask DisposeAsync()
    {
        _tcp.Dispose();
        return ValueTask.CompletedTask;
    }

    public static byte[] Connect(string clientId, bool clean = true, ushort keepAlive = 60, string? willTopic = null, string? willMessage = null,
        byte willQos = 0, bool willRetain = false, string? user = null, string? password = null, string protocol = "MQTT", byte level = 4)
    {
        var body = new List<byte>();
        AddString(body, protocol);
        body.Add(level);
        byte flags = 0;
        if (clean)
        {
            flags |= 0x02;
        }

        if (willTopic is not null)
        {
            flags |= (byte)(0x04 | (willQos << 3) | (willRetain ? 0x20 : 0));
        }

        if (user is not null)
        {
            flags |= 0x80;
        }

        if (password is not null)
        {
            flags |= 0x40;
        }

        body.Add(flags);
        body.Add((byte)(keepAlive >> 8));
        body.Add((byte)keepAlive);
        AddString(body, clientId);
        if (willTopic is not null)
        {
            AddString(body, willTopic);
            AddString(body, willMessage ?? "");
        }
        if (user is not null)
        {
            AddString(body, user);
        }

        if (password is not null)
        {
            AddString(body, password);
        }

        return Packet(0x10, body);
    }

    public static byte[] Subscribe(ushort packetId, string filter, byte qos) =>
        Packet(0x82, [(byte)(packetId >> 8), (byte)packetId, .. StringBytes(filter), qos]);

    public static byte[] SubscribeRaw(ushort packetId, byte[] filter, byte qos) =>
        Packet(0x82, [(byte)(packetId >> 8), (byte)packetId, (byte)(filter.Length >> 8), (byte)filter.Length, .. filter, qos]);

    public static byte[] Publish(string topic, string payload, byte qos = 0, ushort packetId = 0, bool retain = false)
    {
        var body = new List<byte>(StringBytes(topic));
        if (qos > 0)
        {
            body.Add((byte)(packetId >> 8));
            body.Add((byte)packetId);
        }
        body.AddRange(Encoding.UTF8.GetBytes(payload));
        return Packet((byte)(0x30 | (qos << 1) | (retain ? 1 : 0)), body);
    }

    public static byte[] Packet(byte header, IReadOnlyCollection<byte> body)
    {
        var packet = new List<byte> { header };
        var length = body.Count;
        do
        {
            var b = (byte)(length % 128);
            length /= 128;
            if (length > 0)
            {
                b |= 0x80;
            }

            packet.Add(b);
        }
        while (length > 0);
        packet.AddRange(body);
        return [.. packet];
    }

    private static byte[] StringBytes(string s)
    {
        var bytes = Encoding.UTF8.GetBytes(s);
        return [(byte)(bytes.Length >> 8), (byte)bytes.Length, .. bytes];
    }

    private static void AddString(List<byte> body, string s) => body.AddRange(StringBytes(s));
}
