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

    public LoopbackSink()
    {
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

            new Thread(() => Serve(s)) { IsBackground = true, Name = "loadbench-sink-conn" }.Start();
        }
    }

    private static void Serve(Socket s)
    {
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

                    // The client's only PINGs are its handshake and its final flush, each the last thing it
                    // sends before waiting, so a read ending in PING is the one to answer. A PING split
                    // across two reads is still recognised through the carried tail.
                    int keep = Math.Min(n, 6);
                    tail.AsSpan(keep).CopyTo(tail);
                    buf.AsSpan(n - keep, keep).CopyTo(tail.AsSpan(6 - keep));
                    if (tail.AsSpan().SequenceEqual("PING\r\n"u8))
                    {
                        s.Send(Pong);
                        tail.AsSpan().Clear();
                    }
                }
            }
            catch (SocketException)
            {
            }
        }
    }

    public void Dispose()
    {
        _stopped = true;
        _listener.Dispose();
    }
}
