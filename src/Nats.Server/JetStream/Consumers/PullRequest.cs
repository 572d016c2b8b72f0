using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Nats.Server.JetStream.Consumers;

/// <summary>One waiting CONSUMER.MSG.NEXT request (Go's waitingRequest).</summary>
internal sealed class PullRequest
{
    public required string Reply { get; init; }
    public required byte[] ReplyBytes { get; init; }
    public int Remaining { get; set; }
    public int Delivered { get; set; }
    public int MaxBytes { get; set; }
    public bool NoWait { get; init; }
    public long Expires { get; init; }
    public long Heartbeat { get; init; }
    public long NextHeartbeat { get; set; }

    /// <summary>Go's nextReqFromMsg: empty is one message, a number is a batch, JSON is a full request. Times in Environment.TickCount64 ms.</summary>
    public static bool TryParse(ReadOnlySpan<byte> body, long now, out int batch, out int maxBytes, out bool noWait, out long expires, out long heartbeat, out string? error)
    {
        batch = 1;
        maxBytes = 0;
        noWait = false;
        expires = 0;
        heartbeat = 0;
        error = null;
        var trimmed = body.Trim(" \t\r\n"u8);
        if (trimmed.IsEmpty)
        {
            return true;
        }
        if (trimmed[0] == (byte)'{')
        {
            NextRequest? request;
            try
            {
                request = JsonSerializer.Deserialize(trimmed, ConsumerJson.Context.NextRequest);
            }
            catch (JsonException e)
            {
                batch = -1;
                error = e.Message;
                return false;
            }
            request ??= new NextRequest();
            if (request.Heartbeat > 0 && request.Heartbeat * 2 > request.Expires)
            {
                error = "heartbeat value too large";
                return false;
            }
            batch = request.Batch;
            maxBytes = request.MaxBytes;
            noWait = request.NoWait;
            heartbeat = request.Heartbeat / 1_000_000;
            expires = request.Expires > 0 ? now + Math.Max(1, request.Expires / 1_000_000) : 0;
            return true;
        }
        if (int.TryParse(Encoding.ASCII.GetString(trimmed), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var n))
        {
            batch = n;
        }
        return true;
    }
}

/// <summary>The parts of a <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;dc&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c> subject (Go's ackReplyInfo).</summary>
internal static class AckSubject
{
    public static (ulong StreamSeq, ulong DeliverySeq, ulong Count) Parse(ReadOnlySpan<byte> subject)
    {
        // tokens: $JS ACK stream consumer dc sseq dseq ts pending
        Span<int> dots = stackalloc int[9];
        var count = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            if (subject[i] == (byte)'.')
            {
                if (count == dots.Length)
                {
                    return (0, 0, 0);
                }
                dots[count++] = i;
            }
        }
        if (count != 8)
        {
            return (0, 0, 0);
        }
        ReadOnlySpan<byte> Token(ReadOnlySpan<byte> s, Span<int> d, int index) =>
            index == 8 ? s[(d[7] + 1)..] : s[(d[index - 1] + 1)..d[index]];
        return (Number(Token(subject, dots, 5)), Number(Token(subject, dots, 6)), Number(Token(subject, dots, 4)));
    }

    private static ulong Number(ReadOnlySpan<byte> text) =>
        System.Buffers.Text.Utf8Parser.TryParse(text, out ulong value, out var used) && used == text.Length ? value : 0;
}
