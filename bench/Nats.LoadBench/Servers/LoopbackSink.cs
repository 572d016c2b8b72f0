using System.Net;
using System.Net.Sockets;

namespace Nats.LoadBench.Servers;

/// <summary>
/// The machine's ceiling for the pub-only load: it speaks just enough NATS to let the client
/// connect (an INFO line, PONG for a PING that ends a read) and discards every other byte.
/// Any server doing real work on the same bytes can only be slower than this.
/// </summary>
internal sealed class LoopbackSink : IDisposable
{
    private static readonly byte[] Info = "INFO {\"server_id\":\"sink\",\"version\":\"0\",\"proto\":1,\"headers\":true,\"max_payload\":1048576}\r\n"u8.ToArray();
    private static readonly byte[] Pong = "PONG\r\n"u8.ToArray();
    private readonly Socket _listener;
    private readonly Thread _acceptThread;
    private volatile bool _stopped;

    private readonly byte[]? _msgChunk;

    /// <summary>With a payload size, the sink also acts as a source: once the client subscribes it
    /// streams MSG frames as fast as the socket takes them, bounding the receive side instead.</summary>
    public LoopbackSink(int sourcePayload = -1)
    {
        if (sourcePayload >= 0)
        {
            var frame = System.Text.Encoding.ASCII.GetBytes($"MSG bench.src 1 {sourcePayload}\r\n")
                .Concat(new byte[sourcePayload]).Concat("\r\n"u8.ToArray()).ToArray();
            int per = Math.Max(1, (64 * 1024) / frame.Length);
            _msgChunk = new byte[per * frame.Length];
            for (int i = 0; i < per; i++)
            {
                frame.CopyTo(_msgChunk, i * frame.Length);
            }
        }

        _listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(16);
        Port = ((IPEndPoint)_listener.LocalEndPoint!).Port;
        _acceptThread = new Thread(AcceptLoop) { IsBackground = true, Name = "loadbench-sink" };
        _acceptThread.Start();
    }

    public int Port { get; }

    private void AcceptLoop()
    {
        while (!_stopped)
        {
            Socket s;
            try
            {
                s = _listener.Accept();
            }
            catch (SocketException)
            {
                return;
            }
            catch (ObjectDisposedException)
            {
                return;
            }

            new Thread(() => Serve(s, _msgChunk)) { IsBackground = true, Name = "loadbench-sink-conn" }.Start();
        }
    }

    private static void Serve(Socket s, byte[]? msgChunk)
    {
        bool streaming = false;
        bool subscribed = false;
        using (s)
        {
            s.ReceiveBufferSize = 4 << 20;
            var buf = new byte[256 * 1024];
            var tail = new byte[6];
            try
            {
                s.Send(Info);
                while (true)
                {
                    int n = s.Receive(buf);
                    if (n <= 0)
                    {
                        return;
                    }

                    if (streaming)
                    {
                        continue;
                    }

                    // The client's only PINGs are its handshake and its final flush, each the last thing it
                    // sends before waiting, so a read ending in PING is the one to answer. A PING split
                    // across two reads is still recognised through the carried tail.
                    int keep = Math.Min(n, 6);
                    tail.AsSpan(keep).CopyTo(tail);
                    buf.AsSpan(n - keep, keep).CopyTo(tail.AsSpan(6 - keep));
                    subscribed |= msgChunk != null && buf.AsSpan(0, n).IndexOf("SUB "u8) >= 0;
                    if (tail.AsSpan().SequenceEqual("PING\r\n"u8))
                    {
                        s.Send(Pong);
                        tail.AsSpan().Clear();

                        // The source answers the PING that follows the SUB, then owns the socket's send side.
                        if (subscribed)
                        {
                            streaming = true;
                            new Thread(() => Stream(s, msgChunk!)) { IsBackground = true, Name = "loadbench-source" }.Start();
                        }
                    }
                }
            }
            catch (SocketException)
            {
            }
        }
    }

    private static void Stream(Socket s, byte[] chunk)
    {
        try
        {
            s.SendBufferSize = 4 << 20;
            while (true)
            {
                s.Send(chunk);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // The client hung up: the measurement is over.
        }
    }

    public void Dispose()
    {
        _stopped = true;
        _listener.Dispose();
    }
}
