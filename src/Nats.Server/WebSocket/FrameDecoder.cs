using System.Buffers.Binary;

namespace Nats.Server.WebSocket;

/// <summary>What <see cref="FrameDecoder.Decode"/> stopped on.</summary>
internal enum FrameEvent
{
    /// <summary>The input is used up, or the output is full.</summary>
    None,

    /// <summary>A ping arrived: answer <see cref="FrameDecoder.ControlPayload"/> with a pong.</summary>
    Ping,

    /// <summary>A close frame arrived: the client is done.</summary>
    Close,

    /// <summary>The client broke RFC 6455 (unmasked, reserved bits or opcode, bad fragmentation).</summary>
    ProtocolError,
}

/// <summary>
/// Client frames to the NATS byte stream, the way Go's wsRead treats them: text and binary payloads
/// (fragmented or not) are unmasked into one contiguous stream, pings and closes are reported, pongs
/// skipped. Incremental: it takes whatever bytes have arrived and keeps its place inside a frame, so
/// a large read carries many frames and no frame costs a read of its own.
/// </summary>
internal sealed class FrameDecoder
{
    private const int MaxControlPayload = 125;

    private readonly byte[] _control = new byte[MaxControlPayload];
    private long _payloadLeft;
    private uint _mask;
    private int _maskPhase;
    private bool _inFragmentedMessage;

    /// <summary>
    /// Clients must mask their frames, unless they asked for Nats-No-Masking (as Go allows): then,
    /// as in Go's wsRead, frames carry no masking key and the mask bit is not looked at.
    /// </summary>
    public bool ExpectMasked { get; init; } = true;

    public ReadOnlySpan<byte> ControlPayload => _control.AsSpan(0, ControlLength);

    public int ControlLength { get; private set; }

    /// <summary>
    /// Decodes from <paramref name="input"/> into <paramref name="output"/>: returns the input bytes
    /// consumed; <paramref name="written"/> is the payload produced. Stops at a control event, when the
    /// output is full, or when the rest of the input is an incomplete header (or control frame).
    /// </summary>
    public int Decode(ReadOnlySpan<byte> input, Span<byte> output, out int written, out FrameEvent frameEvent)
    {
        frameEvent = FrameEvent.None;
        written = 0;
        var consumed = 0;
        while (true)
        {
            if (_payloadLeft > 0)
            {
                var take = (int)Math.Min(_payloadLeft, Math.Min(input.Length - consumed, output.Length - written));
                if (take == 0)
                {
                    return consumed;
                }
                _maskPhase = FrameMask.Apply(input.Slice(consumed, take), output.Slice(written, take), _mask, _maskPhase);
                consumed += take;
                written += take;
                _payloadLeft -= take;
                continue;
            }
            var header = input[consumed..];
            if (header.Length < 2)
            {
                return consumed;
            }
            var first = header[0];
            var second = header[1];
            var opcode = first & 0x0F;
            var final = (first & 0x80) != 0;
            if ((first & 0x70) != 0 || (ExpectMasked && (second & 0x80) == 0))
            {
                frameEvent = FrameEvent.ProtocolError;
                return consumed;
            }
            var length = (long)(second & 0x7F);
            var keyLength = ExpectMasked ? 4 : 0;
            var headerLength = keyLength + length switch
            {
                126 => 4,
                127 => 10,
                _ => 2,
            };
            if (header.Length < headerLength)
            {
                return consumed;
            }
            if (length == 126)
            {
                length = BinaryPrimitives.ReadUInt16BigEndian(header[2..]);
            }
            else if (length == 127)
            {
                var wide = BinaryPrimitives.ReadUInt64BigEndian(header[2..]);
                if (wide > long.MaxValue)
                {
                    frameEvent = FrameEvent.ProtocolError;
                    return consumed;
                }
                length = (long)wide;
            }
            // An unmasked frame goes through the same path with a zero mask (a plain copy).
            var mask = ExpectMasked ? BinaryPrimitives.ReadUInt32LittleEndian(header[(headerLength - 4)..]) : 0u;
            switch (opcode)
            {
                case 0x0 when !_inFragmentedMessage:
                case 0x1 or 0x2 when _inFragmentedMessage:
                    frameEvent = FrameEvent.ProtocolError;
                    return consumed;
                case 0x0 or 0x1 or 0x2:
                    _inFragmentedMessage = !final;
                    _payloadLeft = length;
                    _mask = mask;
                    _maskPhase = 0;
                    consumed += headerLength;
                    continue;
                case 0x8 or 0x9 or 0xA:
                    if (!final || length > MaxControlPayload)
                    {
                        frameEvent = FrameEvent.ProtocolError;
                        return consumed;
                    }
                    if (header.Length < headerLength + length)
                    {
                        return consumed;
                    }
                    ControlLength = (int)length;
                    FrameMask.Apply(header.Slice(headerLength, ControlLength), _control, mask, 0);
                    consumed += headerLength + ControlLength;
                    if (opcode == 0xA)
                    {
                        continue;
                    }
                    frameEvent = opcode == 0x9 ? FrameEvent.Ping : FrameEvent.Close;
                    return consumed;
                default:
                    frameEvent = FrameEvent.ProtocolError;
                    return consumed;
            }
        }
    }

    /// <summary>Writes a server frame header (final, unmasked) for <paramref name="payloadLength"/> bytes; returns its length.</summary>
    public static int WriteHeader(Span<byte> destination, int opcode, int payloadLength)
    {
        destination[0] = (byte)(0x80 | opcode);
        if (payloadLength <= 125)
        {
            destination[1] = (byte)payloadLength;
            return 2;
        }
        if (payloadLength <= ushort.MaxValue)
        {
            destination[1] = 126;
            BinaryPrimitives.WriteUInt16BigEndian(destination[2..], (ushort)payloadLength);
            return 4;
        }
        destination[1] = 127;
        BinaryPrimitives.WriteUInt64BigEndian(destination[2..], (ulong)payloadLength);
        return 10;
    }
}
