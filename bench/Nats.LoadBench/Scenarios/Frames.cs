using System.Text;

namespace Nats.LoadBench.Scenarios;

internal delegate void SendBytes(ReadOnlySpan<byte> data);

/// <summary>Pre-encoded protocol frames, built once per run so the send loop only copies bytes.</summary>
internal static class Frames
{
    public static byte[] Payload(int size)
    {
        var p = new byte[size];
        for (int i = 0; i < size; i++)
        {
            p[i] = (byte)('a' + (i % 26));
        }

        return p;
    }

    public static byte[] Pub(string subject, string? reply, int size)
    {
        var head = Encoding.ASCII.GetBytes(reply == null ? $"PUB {subject} {size}\r\n" : $"PUB {subject} {reply} {size}\r\n");
        return [.. head, .. Payload(size), (byte)'\r', (byte)'\n'];
    }

    /// <summary>Repeats a frame to roughly 64 KiB so each send is one large syscall.</summary>
    public static (byte[] Chunk, int FramesPerChunk) Chunk(byte[] frame)
    {
        int per = Math.Max(1, (64 * 1024) / frame.Length);
        var chunk = new byte[per * frame.Length];
        for (int i = 0; i < per; i++)
        {
            frame.CopyTo(chunk, i * frame.Length);
        }

        return (chunk, per);
    }
}
