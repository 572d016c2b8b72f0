using System.Net.Security;
using System.Net.Sockets;
using System.Text;

namespace Nats.LoadBench.Client;

/// <summary>
/// A deliberately lean NATS client: one socket, blocking I/O, a parser that finds frames by
/// their length fields, and no per-message allocation. Either a dedicated reader thread pumps
/// it (<see cref="StartReader"/>) or the caller pumps it inline (<see cref="PumpUntil"/>),
/// which keeps request/reply round trips free of thread hand-offs.
/// </summary>
internal sealed partial class RawConnection : IDisposable
{
    private static readonly byte[] PingBytes = "PING\r\n"u8.ToArray();
    private static readonly byte[] PongBytes = "PONG\r\n"u8.ToArray();

    private readonly Socket _socket;
    private readonly Lock _writeLock = new();
    private readonly SemaphoreSlim _pongSignal = new(0);
    private Stream _stream;
    private byte[] _buf = new byte[1 << 20];
    private int _start;
    private int _end;
    private long _pongs;
    private IMsgHandler? _handler;
    private Thread? _reader;
    private volatile bool _disposed;

    private RawConnection(Socket socket, Stream stream)
    {
        _socket = socket;
        _stream = stream;
    }

    public string InfoJson { get; private set; } = "";

    public string? LastError { get; private set; }

    public bool Closed { get; private set; }

    public long Pongs => Interlocked.Read(ref _pongs);

    public static RawConnection Connect(string host, int port, Transport transport, string name, int timeoutMs = 10_000)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.SendBufferSize = 4 << 20;
        socket.ReceiveBufferSize = 4 << 20;
        socket.ReceiveTimeout = timeoutMs;
        socket.SendTimeout = 60_000;
        try
        {
            socket.Connect(host, port);
        }
        catch (SocketException ex)
        {
            socket.Dispose();
            throw new SetupException($"connect {host}:{port} failed: {ex.SocketErrorCode}", ex);
        }

        Stream stream = new NetworkStream(socket, ownsSocket: false);
        if (transport == Transport.WebSocket)
        {
            stream = WebSocketStream.Upgrade(stream, host, port);
        }

        var conn = new RawConnection(socket, stream);
        try
        {
            conn.Handshake(host, transport, name, timeoutMs);
        }
        catch (Exception ex)
        {
            conn.Dispose();
            throw ex as SetupException ?? new SetupException($"handshake with {host}:{port} failed: {ex.Message}", ex);
        }

        return conn;
    }

    private void Handshake(string host, Transport transport, string name, int timeoutMs)
    {
        var deadline = Environment.TickCount64 + timeoutMs;
        PumpUntil(() => InfoJson.Length > 0, timeoutMs);
        bool tls = transport == Transport.Tls;
        if (tls)
        {
            if (!InfoFlag("tls_required"))
            {
                throw new SetupException("server INFO does not require TLS on the TLS port");
            }

            var ssl = new SslStream(_stream, leaveInnerStreamOpen: false, (_, _, _, _) => true);
            ssl.AuthenticateAsClient(host);
            _stream = ssl;
        }

        var connect = $"CONNECT {{\"verbose\":false,\"pedantic\":false,\"tls_required\":{(tls ? "true" : "false")},\"name\":\"{name}\",\"lang\":\"loadbench\",\"version\":\"1.0\",\"protocol\":1,\"headers\":true,\"no_responders\":true}}\r\nPING\r\n";
        Send(Encoding.ASCII.GetBytes(connect));
        PumpUntil(() => Pongs > 0 || LastError != null, (int)Math.Max(1, deadline - Environment.TickCount64));
        if (LastError != null)
        {
            throw new SetupException($"CONNECT refused: {LastError}");
        }
    }

    /// <summary>Reads a boolean from the server's INFO, tolerating any JSON formatting.</summary>
    public bool InfoFlag(string name)
    {
        try
        {
            using var doc = System.Text.Json.JsonDocument.Parse(InfoJson);
            return doc.RootElement.TryGetProperty(name, out var v) && v.ValueKind == System.Text.Json.JsonValueKind.True;
        }
        catch (System.Text.Json.JsonException)
        {
            return false;
        }
    }

    public void Send(ReadOnlySpan<byte> data)
    {
        lock (_writeLock)
        {
            _stream.Write(data);
        }
    }

    public void Send(string protocolLine) => Send(Encoding.ASCII.GetBytes(protocolLine));

    /// <summary>Round trip a PING, proving the server has processed everything sent before it.</summary>
    public void Flush(int timeoutMs = 30_000)
    {
        long before = Pongs;
        Send(PingBytes);
        if (_reader != null)
        {
            var deadline = Environment.TickCount64 + timeoutMs;
            while (Pongs <= before)
            {
                var left = deadline - Environment.TickCount64;
                if (left <= 0 || Closed)
                {
                    throw new TimeoutException($"no PONG within {timeoutMs} ms (closed={Closed}, err={LastError})");
                }

                _pongSignal.Wait(TimeSpan.FromMilliseconds(Math.Min(left, 200)));
            }
        }
        else
        {
            PumpUntil(() => Pongs > before, timeoutMs);
        }
    }

    public void SetHandler(IMsgHandler? handler) => _handler = handler;

    public void StartReader(IMsgHandler handler)
    {
        _handler = handler;
        _socket.ReceiveTimeout = 0;
        _reader = new Thread(ReadLoop) { IsBackground = true, Name = "loadbench-reader" };
        _reader.Start();
    }

    private void ReadLoop()
    {
        try
        {
            while (!_disposed && Pump())
            {
            }
        }
        catch (Exception) when (_disposed)
        {
        }
        catch (Exception ex)
        {
            LastError ??= "reader: " + ex.Message;
        }
        finally
        {
            Closed = true;
            _pongSignal.Release();
        }
    }

    /// <summary>Reads and dispatches inline until the condition holds; throws on timeout or close.</summary>
    public void PumpUntil(Func<bool> condition, int timeoutMs)
    {
        var deadline = Environment.TickCount64 + timeoutMs;
        while (!condition())
        {
            var left = deadline - Environment.TickCount64;
            if (left <= 0)
            {
                throw new TimeoutException($"timed out after {timeoutMs} ms waiting on the server");
            }

            _socket.ReceiveTimeout = (int)Math.Max(1, left);
            bool alive;
            try
            {
                alive = Pump();
            }
            catch (IOException ex) when (ex.InnerException is SocketException { SocketErrorCode: SocketError.TimedOut or SocketError.WouldBlock })
            {
                throw new TimeoutException($"timed out after {timeoutMs} ms waiting on the server", ex);
            }

            if (!alive)
            {
                throw new IOException($"connection closed by server ({LastError ?? "no -ERR"})");
            }
        }
    }

    /// <summary>One blocking read plus parse of every complete frame; false once the peer closed.</summary>
    public bool Pump()
    {
        if (_end == _buf.Length)
        {
            Compact();
        }

        int n = _stream.Read(_buf, _end, _buf.Length - _end);
        if (n <= 0)
        {
            Closed = true;
            return false;
        }

        _end += n;
        Parse();
        return true;
    }

    public void Dispose()
    {
        _disposed = true;
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
        }
        catch (ObjectDisposedException)
        {
        }

        _stream.Dispose();
        _socket.Dispose();
        _reader?.Join(5000);
    }
}
