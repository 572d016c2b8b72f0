using System.Buffers.Binary;
using System.Text;
using Nats.Server.WebSocket;

namespace Nats.Server.Tests.WebSocket;

/// <summary>Client frames decoded incrementally, however the bytes arrive, into the NATS byte stream.</summary>
public class FrameDecoderTests
{
    private static readonly byte[] Mask = [0x12, 0x9a, 0xf0, 0x3c];

    [Theory]
    [InlineData(0, 0)]
    [InlineData(1, 3)]
    [InlineData(7, 1)]
    [InlineData(31, 2)]
    [InlineData(33, 0)]
    [InlineData(1000, 3)]
    public void Mask_matches_the_bytewise_definition_at_every_phase(int length, int phase)
    {
        var source = Enumerable.Range(0, length).Select(i => (byte)(i * 7 + 3)).ToArray();
        var destination = new byte[length];
        var next = FrameMask.Apply(source, destination, BinaryPrimitives.ReadUInt32LittleEndian(Mask), phase);
        for (var i = 0; i < length; i++)
        {
            Assert.Equal((byte)(source[i] ^ Mask[(i + phase) & 3]), destination[i]);
        }
        Assert.Equal((phase + length) & 3, next);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(5)]
    [InlineData(4096)]
    public void Fragmented_text_and_binary_frames_join_into_one_stream_whatever_the_read_sizes(int chunk)
    {
        var big = new string('x', 70_000);
        var wire = Concat(
            Frame(0x1, "CONNECT {}\r\nPU", fin: false),
            Frame(0x0, "B a 2\r\nhi\r\n", fin: false),
            Frame(0xA, "pong payload"),
            Frame(0x0, "\r\n", fin: true),
            Frame(0x2, "PUB b 300\r\n" + new string('y', 300) + "\r\n"),
            Frame(0x2, big));
        var expected = "CONNECT {}\r\nPUB a 2\r\nhi\r\n\r\nPUB b 300\r\n" + new string('y', 300) + "\r\n" + big;

        var decoder = new FrameDecoder();
        var output = new MemoryStream();
        var pending = new List<byte>();
        var outBuffer = new byte[1000];
        for (var offset = 0; offset < wire.Length; offset += chunk)
        {
            pending.AddRange(wire.AsSpan(offset, Math.Min(chunk, wire.Length - offset)).ToArray());
            while (true)
            {
                var consumed = decoder.Decode(pending.ToArray(), outBuffer, out var written, out var frameEvent);
                Assert.Equal(FrameEvent.None, frameEvent);
                pending.RemoveRange(0, consumed);
                output.Write(outBuffer, 0, written);
                if (written < outBuffer.Length)
                {
                    break;
                }
            }
        }
        Assert.Empty(pending);
        Assert.Equal(expected, Encoding.ASCII.GetString(output.ToArray()));
    }

    [Fact]
    public void Ping_and_close_stop_the_decoder_with_their_payload()
    {
        var decoder = new FrameDecoder();
        var wire = Concat(Frame(0x2, "PING\r\n"), Frame(0x9, "are you there"), Frame(0x8, "\u0003\u00e8"));
        var output = new byte[100];
        var consumed = decoder.Decode(wire, output, out var written, out var frameEvent);
        Assert.Equal(FrameEvent.Ping, frameEvent);
        Assert.Equal("PING\r\n", Encoding.ASCII.GetString(output, 0, written));
        Assert.Equal("are you there", Encoding.ASCII.GetString(decoder.ControlPayload));
        decoder.Decode(wire.AsSpan(consumed), output, out written, out frameEvent);
        Assert.Equal(FrameEvent.Close, frameEvent);
        Assert.Equal(0, written);
    }

    [Theory]
    [InlineData("unmasked")]
    [InlineData("rsv1")]
    [InlineData("opcode3")]
    [InlineData("continuation-first")]
    [InlineData("data-inside-fragmented")]
    [InlineData("long-ping")]
    [InlineData("fragmented-ping")]
    public void Protocol_errors_are_reported(string kind)
    {
        var wire = kind switch
        {
            "unmasked" => Frame(0x2, "PING\r\n", masked: false),
            "rsv1" => Flip(Frame(0x2, "PING\r\n"), 0, 0x40),
            "opcode3" => Frame(0x3, "x"),
            "continuation-first" => Frame(0x0, "x"),
            "data-inside-fragmented" => Concat(Frame(0x2, "a", fin: false), Frame(0x1, "b")),
            "long-ping" => Frame(0x9, new string('p', 126)),
            _ => Frame(0x9, "p", fin: false),
        };
        new FrameDecoder().Decode(wire, new byte[200], out _, out var frameEvent);
        Assert.Equal(FrameEvent.ProtocolError, frameEvent);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(4096)]
    public void Without_masking_frames_carry_no_key_and_pings_are_still_reported(int chunk)
    {
        var big = new string('y', 300);
        var wire = Concat(Frame(0x2, "PUB a 300\r\n", masked: false), Frame(0x2, big, fin: false, masked: false), Frame(0x0, "\r\n", masked: false), Frame(0x9, "hb", masked: false));
        var decoder = new FrameDecoder { ExpectMasked = false };
        var output = new List<byte>();
        var outBuffer = new byte[64];
        var pings = new List<string>();
        var pending = new List<byte>();
        for (var offset = 0; offset < wire.Length; offset += chunk)
        {
            pending.AddRange(wire.Skip(offset).Take(chunk));
            while (true)
            {
                var consumed = decoder.Decode(pending.ToArray(), outBuffer, out var written, out var frameEvent);
                pending.RemoveRange(0, consumed);
                output.AddRange(outBuffer.Take(written));
                Assert.NotEqual(FrameEvent.ProtocolError, frameEvent);
                if (frameEvent == FrameEvent.Ping)
                {
                    pings.Add(Encoding.ASCII.GetString(decoder.ControlPayload));
                }
                if (consumed == 0 && written == 0 && frameEvent == FrameEvent.None)
                {
                    break;
                }
            }
        }
        Assert.Equal("PUB a 300\r\n" + big + "\r\n", Encoding.ASCII.GetString([.. output]));
        Assert.Equal(["hb"], pings);
    }

    [Theory]
    [InlineData(5, 2)]
    [InlineData(300, 4)]
    [InlineData(70_000, 10)]
    public void Server_frame_headers_use_the_shortest_length_form(int length, int headerLength)
    {
        var header = new byte[10];
        Assert.Equal(headerLength, FrameDecoder.WriteHeader(header, 0x2, length));
        Assert.Equal(0x82, header[0]);
        Assert.Equal(0, header[1] & 0x80);
    }

    private static byte[] Frame(int opcode, string payload, bool fin = true, bool masked = true)
    {
        var data = Encoding.Latin1.GetBytes(payload);
        var frame = new List<byte> { (byte)((fin ? 0x80 : 0) | opcode) };
        var maskBit = masked ? 0x80 : 0;
        if (data.Length <= 125)
        {
            frame.Add((byte)(maskBit | data.Length));
        }
        else if (data.Length <= ushort.MaxValue)
        {
            frame.Add((byte)(maskBit | 126));
            frame.Add((byte)(data.Length >> 8));
            frame.Add((byte)data.Length);
        }
        else
        {
            frame.Add((byte)(maskBit | 127));
            var length = new byte[8];
            BinaryPrimitives.WriteUInt64BigEndian(length, (ulong)data.Length);
            frame.AddRange(length);
        }
        if (masked)
        {
            frame.AddRange(Mask);
            frame.AddRange(data.Select((b, i) => (byte)(b ^ Mask[i & 3])));
        }
        else
        {
            frame.AddRange(data);
        }
        return [.. frame];
    }

    private static byte[] Flip(byte[] frame, int index, byte bits)
    {
        frame[index] ^= bits;
        return frame;
    }

    private static byte[] Concat(params byte[][] frames) => frames.SelectMany(f => f).ToArray();
}
