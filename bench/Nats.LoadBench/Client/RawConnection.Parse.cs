using System.Text;

namespace Nats.LoadBench.Client;

/// <summary>The receive side: frames are located by their length fields, never by scanning payloads.</summary>
internal sealed partial class RawConnection
{
    private void Compact()
    {
        int live = _end - _start;
        if (_start == 0)
        {
            Array.Resize(ref _buf, _buf.Length * 2);
            return;
        }

        Buffer.BlockCopy(_buf, _start, _buf, 0, live);
        _start = 0;
        _end = live;
    }

    private void Parse()
    {
        var handler = _handler;
        while (_start < _end)
        {
            var span = _buf.AsSpan(_start, _end - _start);
            int nl = span.IndexOf((byte)'\n');
            if (nl < 0)
            {
                break;
            }

            var line = span[..nl];
            if (line.Length > 0 && line[^1] == '\r')
            {
                line = line[..^1];
            }

            byte op = (byte)(span[0] | 0x20);
            if (op == 'm' || op == 'h')
            {
                int consumed = ParseMsg(span, line, nl + 1, op == 'h', handler);
                if (consumed == 0)
                {
                    break;
                }

                _start += consumed;
                continue;
            }

            if (op == 'p')
            {
                if ((line.Length > 1 && (line[1] | 0x20) == 'i'))
                {
                    Send(PongBytes);
                }
                else
                {
                    Interlocked.Increment(ref _pongs);
                    _pongSignal.Release();
                }
            }
            else if (op == 'i')
            {
                int brace = line.IndexOf((byte)'{');
                InfoJson = brace < 0 ? "{}" : Encoding.UTF8.GetString(line[brace..]);
            }
            else if (op == '-')
            {
                LastError = Encoding.UTF8.GetString(line);
            }
            else if (op != '+')
            {
                throw new InvalidDataException("unexpected protocol line: " + Encoding.UTF8.GetString(line[..Math.Min(line.Length, 80)]));
            }

            _start += nl + 1;
        }

        if (_start == _end)
        {
            _start = _end = 0;
        }
        else if (_start > _buf.Length / 2)
        {
            Compact();
        }

        handler?.OnBatchEnd();
    }

    /// <summary>Returns bytes consumed, or 0 when the payload has not fully arrived yet.</summary>
    private int ParseMsg(ReadOnlySpan<byte> span, ReadOnlySpan<byte> line, int bodyStart, bool hasHeaders, IMsgHandler? handler)
    {
        // Tokens after the op: subject sid [reply] [hdrlen] total. Runs of blanks count as one
        // separator because Go emits "MSG subj 1  23" when a JetStream reply is empty.
        Span<Range> tok = stackalloc Range[6];
        int count = 0;
        int i = hasHeaders ? 4 : 3;
        while (i < line.Length && count < tok.Length)
        {
            while (i < line.Length && (line[i] == ' ' || line[i] == '\t'))
            {
                i++;
            }

            if (i >= line.Length)
            {
                break;
            }

            int s = i;
            while (i < line.Length && line[i] != ' ' && line[i] != '\t')
            {
                i++;
            }

            tok[count++] = new Range(s, i);
        }

        int minTokens = hasHeaders ? 4 : 3;
        if (count < minTokens || count > minTokens + 1)
        {
            throw new InvalidDataException("malformed MSG line: " + Encoding.UTF8.GetString(line));
        }

        int total = ParseInt(line[tok[count - 1]]);
        int hdrLen = hasHeaders ? ParseInt(line[tok[count - 2]]) : 0;
        int frame = bodyStart + total + 2;
        if (span.Length < frame)
        {
            if (frame > _buf.Length)
            {
                Array.Resize(ref _buf, frame * 2);
            }

            return 0;
        }

        var reply = count == minTokens + 1 ? line[tok[2]] : default;
        var body = span.Slice(bodyStart, total);
        handler?.OnMsg(line[tok[0]], reply, body[..hdrLen], body[hdrLen..]);
        return frame;
    }

    private static int ParseInt(ReadOnlySpan<byte> digits)
    {
        int v = 0;
        foreach (var d in digits)
        {
            if (d < '0' || d > '9')
            {
                throw new InvalidDataException("bad length field");
            }

            v = (v * 10) + (d - '0');
        }

        return v;
    }
}
