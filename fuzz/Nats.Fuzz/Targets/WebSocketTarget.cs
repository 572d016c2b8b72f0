using Nats.Server.WebSocket;

namespace Nats.Fuzz.Targets;

/// <summary>
/// The WebSocket frame decoder as the listener drives it. Byte 0 picks masking and the output size, byte 1 the read
/// size; the rest is what the client sent. Oracle: no exception, no call that neither consumes, writes nor reports
/// while a whole frame header is buffered, and the same payload stream and events for any read size.
/// </summary>
internal static class WebSocketTarget
{
    private static readonly int[] OutputSizes = [4096, 1, 7, 125];

    public static void Run(ReadOnlySpan<byte> input)
    {
        if (input.Length < 2)
        {
            return;
        }
        var masked = (input[0] & 1) == 0;
        var outputSize = OutputSizes[(input[0] >> 1) & 3];
        var data = input[2..];
        var atOnce = Drive(data, data.Length, masked, outputSize);
        var readSize = 1 + (input[1] % 32);
        var inPieces = Drive(data, readSize, masked, outputSize);
        if (atOnce != inPieces)
        {
            throw new OracleException($"reads of {readSize} bytes changed the result:\n  at once: {atOnce}\n  pieces:  {inPieces}");
        }
    }

    /// <summary>Returns the payload bytes (hex) and events in order, up to the first close or protocol error.</summary>
    private static string Drive(ReadOnlySpan<byte> data, int readSize, bool masked, int outputSize)
    {
        var decoder = new FrameDecoder { ExpectMasked = masked };
        var transcript = new System.Text.StringBuilder();
        Span<byte> output = stackalloc byte[outputSize];
        var pending = new List<byte>();
        var offset = 0;
        while (offset < data.Length)
        {
            var take = Math.Min(readSize, data.Length - offset);
            pending.AddRange(data.Slice(offset, take));
            offset += take;
            var buffer = pending.ToArray().AsSpan();
            var position = 0;
            while (position < buffer.Length)
            {
                var consumed = decoder.Decode(buffer[position..], output, out var written, out var frameEvent);
                if (consumed < 0 || consumed > buffer.Length - position || written < 0 || written > output.Length)
                {
                    throw new OracleException($"consumed {consumed} of {buffer.Length - position}, wrote {written} of {output.Length}");
                }
                position += consumed;
                transcript.Append(Convert.ToHexString(output[..written]));
                if (frameEvent is FrameEvent.Close or FrameEvent.ProtocolError)
                {
                    return transcript.Append($" [{frameEvent}]").ToString();
                }
                if (frameEvent == FrameEvent.Ping)
                {
                    transcript.Append($" [Ping {Convert.ToHexString(decoder.ControlPayload)}] ");
                    continue;
                }
                if (consumed == 0 && written == 0)
                {
                    // Waiting for the rest of a header or control frame: never more than one such frame's worth.
                    if (buffer.Length - position >= 14 + 125)
                    {
                        throw new OracleException($"no progress with {buffer.Length - position} bytes buffered");
                    }
                    break;
                }
            }
            pending.RemoveRange(0, position);
        }
        return transcript.ToString();
    }
}
