using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace Nats.LoadBench.Client;

/// <summary>
/// Minimal RFC 6455 client framing so the NATS client can run over a server's websocket port:
/// each Write becomes one masked binary frame, and Read returns the concatenated payloads of
/// the server's (unmasked) frames. No compression, no fragmentation on send.
/// </summary>
internal sealed class WebSocketStream : Stream
{
    private readonly Stream _inner;
    private readonly byte[] _mask = new byte[4];
    private byte[] _out = new byte[256 * 1024];
    private readonly byte[] _header = new byte[14];
    private long _frameLeft;

    private WebSocketStream(Stream inner)
    {
        _inner = inner;
        RandomNumberGenerator.Fill(_mask);
    }

    /// <summary>Upgrades <paramref name="inner"/> at <paramref name="path"/> ("/mqtt" with the mqtt subprotocol for MQTT over WebSocket).</summary>
    public static WebSocketStream Upgrade(Stream inner, string host, int port, string path = "/", string? subProtocol = null)
    {
        var key = Convert.ToBase64String(RandomNumberGenerator.GetBytes(16));
        var protocol = subProtocol is null ? "" : $"Sec-WebSocket-Protocol: {subProtocol}\r\n";
        var request = $"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{protocol}\r\n";
        inner.Write(Encoding.ASCII.GetBytes(request));

        // Read byte by byte up to the blank line so no frame bytes are swallowed.
        var head = new List<byte>(256);
        while (head.Count < 8192)
        {
            int b = inner.ReadByte();
            if (b < 0)
            {
                throw new SetupException("websocket upgrade: connection closed");
            }

            head.Add((byte)b);
            int n = head.Count;
            if (n >= 4 && head[n - 4] == '\r' && head[n - 3] == '\n' && head[n - 2] == '\r' && head[n - 1] == '\n')
            {
                break;
            }
        }

        var text = Encoding.ASCII.GetString(head.ToArray());
        if (!text.StartsWith("HTTP/1.1 101", StringComparison.Ordinal))
        {
            throw new SetupException("websocket upgrade refused: " + text.Split('\r')[0]);
        }

        return new WebSocketStream(inner);
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        while (_frameLeft == 0)
        {
            if (!ReadFrameHeader())
            {
                return 0;
            }
        }

        int want = (int)Math.Min(buffer.Length, _frameLeft);
        int n = _inner.Read(buffer[..want]);
        if (n <= 0)
        {
            return 0;
        }

        _frameLeft -= n;
        return n;
    }

    /// <summary>Consumes one frame header; control frames are handled here and yield no data.</summary>
    private bool ReadFrameHeader()
    {
        if (!ReadInnerExactly(_header.AsSpan(0, 2)))
        {
            return false;
        }

        int opcode = _header[0] & 0x0F;
        bool masked = (_header[1] & 0x80) != 0;
        long len = _header[1] & 0x7F;
        if (len == 126)
        {
            ReadInnerExactly(_header.AsSpan(2, 2));
            len = BinaryPrimitives.ReadUInt16BigEndian(_header.AsSpan(2, 2));
        }
        else if (len == 127)
        {
            ReadInnerExactly(_header.AsSpan(2, 8));
            len = (long)BinaryPrimitives.ReadUInt64BigEndian(_header.AsSpan(2, 8));
        }

        if (masked)
        {
            throw new InvalidDataException("server sent a masked websocket frame");
        }

        if (opcode is 0x0 or 0x1 or 0x2)
        {
            _frameLeft = len;
            return true;
        }

        var control = new byte[len];
        ReadInnerExactly(control);
        if (opcode == 0x8)
        {
            return false;
        }

        if (opcode == 0x9)
        {
            WriteFrame(0xA, control);
        }

        return true;
    }

    private bool ReadInnerExactly(Span<byte> dst)
    {
        int got = 0;
        while (got < dst.Length)
        {
            int n = _inner.Read(dst[got..]);
            if (n <= 0)
            {
                return false;
            }

            got += n;
        }

        return true;
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer) => WriteFrame(0x2, buffer);

    private void WriteFrame(int opcode, ReadOnlySpan<byte> payload)
    {
        int headerLen = payload.Length < 126 ? 2 : payload.Length <= ushort.MaxValue ? 4 : 10;
        int total = headerLen + 4 + payload.Length;
        if (_out.Length < total)
        {
            _out = new byte[total * 2];
        }

        _out[0] = (byte)(0x80 | opcode);
        if (headerLen == 2)
        {
            _out[1] = (byte)(0x80 | payload.Length);
        }
        else if (headerLen == 4)
        {
            _out[1] = 0x80 | 126;
            BinaryPrimitives.WriteUInt16BigEndian(_out.AsSpan(2), (ushort)payload.Length);
        }
        else
        {
            _out[1] = 0x80 | 127;
            BinaryPrimitives.WriteUInt64BigEndian(_out.AsSpan(2), (ulong)payload.Length);
        }

        _mask.CopyTo(_out, headerLen);
        var dst = _out.AsSpan(headerLen + 4, payload.Length);
        payload.CopyTo(dst);
        Mask(dst);
        _inner.Write(_out, 0, total);
    }

    /// <summary>XORs eight bytes at a time; the 4-byte key repeats, so a doubled key covers a ulong.</summary>
    private void Mask(Span<byte> data)
    {
        uint k = BinaryPrimitives.ReadUInt32LittleEndian(_mask);
        ulong k8 = ((ulong)k << 32) | k;
        int i = 0;
        var words = System.Runtime.InteropServices.MemoryMarshal.Cast<byte, ulong>(data);
        for (int w = 0; w < words.Length; w++)
        {
            words[w] ^= k8;
        }

        i = words.Length * 8;
        for (; i < data.Length; i++)
        {
            data[i] ^= _mask[i & 3];
        }
    }

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override void Flush() => _inner.Flush();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _inner.Dispose();
        }

        base.Dispose(disposing);
    }
}
