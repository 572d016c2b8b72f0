using System.Globalization;
using System.Text;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Differential;

internal enum StepKind
{
    Connect,
    Send,
    SendSplit,
    Sync,
    ExpectClosed,
    Close,
    Alive,
    Reply,
}

internal sealed record ScriptStep(StepKind Kind, string Connection, byte[] Payload, int LineNumber);

/// <summary>
/// One differential script, parsed from the small line DSL documented in docs/DIFFERENTIAL.md:
/// <c>server:</c>, <c>option:</c>, <c>unordered:</c> headers, then <c>conn</c>, <c>send</c>, <c>send-split</c>,
/// <c>sync</c>, <c>expect-closed</c>, <c>close</c> and <c>alive</c> steps.
/// </summary>
internal sealed class ProtocolScript
{
    public required string Name { get; init; }

    public ServerSettings Server { get; private init; } = new();

    /// <summary>Server PINGs are kept in transcripts (normally answered and dropped).</summary>
    public bool KeepPings { get; private set; }

    /// <summary>The harness does not answer server PINGs (for stale-connection scripts).</summary>
    public bool NoAutoPong { get; private set; }

    /// <summary>Groups of connections compared as one sorted multiset (queue group members).</summary>
    public List<string[]> UnorderedGroups { get; } = new();

    /// <summary>Lines of <c>config:</c>: raw configuration text given to both servers as it is.</summary>
    public List<string> RawConfig { get; } = new();

    public List<ScriptStep> Steps { get; } = new();

    public static ProtocolScript Load(string path) =>
        Parse(Path.GetFileNameWithoutExtension(path), File.ReadAllLines(path));

    public static ProtocolScript Parse(string name, IReadOnlyList<string> lines)
    {
        ServerSettings? server = null;
        var pending = new ProtocolScript { Name = name };
        for (var i = 0; i < lines.Count; i++)
        {
            var lineNo = i + 1;
            var line = lines[i].Trim();
            if (line.Length == 0 || line.StartsWith('#'))
            {
                continue;
            }

            try
            {
                ParseLine(pending, line, lineNo, ref server);
            }
            catch (FormatException e)
            {
                throw new FormatException($"{name}:{lineNo}: {e.Message}", e);
            }
        }

        var script = new ProtocolScript
        {
            Name = name,
            Server = server ?? new ServerSettings(),
            KeepPings = pending.KeepPings,
            NoAutoPong = pending.NoAutoPong,
        };
        script.UnorderedGroups.AddRange(pending.UnorderedGroups);
        script.Server.RawConfig.AddRange(pending.RawConfig);
        script.Steps.AddRange(pending.Steps);
        return script;
    }

    private static void ParseLine(ProtocolScript s, string line, int lineNo, ref ServerSettings? server)
    {
        var words = Tokenize(line);
        var head = words[0];
        switch (head)
        {
            case "server:":
                server = ServerSettings.Parse(words.Skip(1));
                return;
            case "config:":
                s.RawConfig.Add(line[(line.IndexOf("config:", StringComparison.Ordinal) + "config:".Length)..].Trim());
                return;
            case "option:":
                foreach (var o in words.Skip(1))
                {
                    if (o == "keep-pings")
                    {
                        s.KeepPings = true;
                    }
                    else if (o == "no-auto-pong")
                    {
                        s.NoAutoPong = true;
                    }
                    else
                    {
                        throw new FormatException($"unknown option '{o}'");
                    }
                }

                return;
            case "unordered:":
                s.UnorderedGroups.Add(words.Skip(1).ToArray());
                return;
        }

        if (words.Count < 2)
        {
            throw new FormatException($"'{head}' needs a connection name");
        }

        var conn = words[1];
        switch (head)
        {
            case "conn": s.Steps.Add(new(StepKind.Connect, conn, [], lineNo)); break;
            case "sync": s.Steps.Add(new(StepKind.Sync, conn, [], lineNo)); break;
            case "expect-closed": s.Steps.Add(new(StepKind.ExpectClosed, conn, [], lineNo)); break;
            case "close": s.Steps.Add(new(StepKind.Close, conn, [], lineNo)); break;
            case "alive": s.Steps.Add(new(StepKind.Alive, conn, [], lineNo)); break;
            case "reply":
                // An empty quoted string is a valid reply (it ends a streamed response).
                var pieces = words.Skip(2).Where(w => w != "\"\"").ToList();
                s.Steps.Add(new(StepKind.Reply, conn, pieces.Count == 0 ? [] : BuildPayload(pieces), lineNo));
                break;
            case "send":
            case "send-split":
                var kind = head == "send" ? StepKind.Send : StepKind.SendSplit;
                s.Steps.Add(new(kind, conn, BuildPayload(words.Skip(2)), lineNo));
                break;
            default:
                throw new FormatException($"unknown step '{head}'");
        }
    }

    /// <summary>Payload pieces: a quoted string, or <c>N*"text"</c> for text repeated N times.</summary>
    private static byte[] BuildPayload(IEnumerable<string> pieces)
    {
        var bytes = new List<byte>();
        foreach (var piece in pieces)
        {
            var repeat = 1;
            var text = piece;
            var star = piece.IndexOf("*\"", StringComparison.Ordinal);
            if (star > 0 && int.TryParse(piece[..star], NumberStyles.None, CultureInfo.InvariantCulture, out var n))
            {
                repeat = n;
                text = piece[(star + 1)..];
            }

            if (text.Length < 2 || text[0] != '"' || text[^1] != '"')
            {
                throw new FormatException($"payload piece {piece} is not a quoted string");
            }

            var one = Unescape(text[1..^1]);
            for (var r = 0; r < repeat; r++)
            {
                bytes.AddRange(one);
            }
        }

        if (bytes.Count == 0)
        {
            throw new FormatException("send needs at least one quoted string");
        }

        return bytes.ToArray();
    }

    private static byte[] Unescape(string s)
    {
        var sb = new List<byte>(s.Length);
        for (var i = 0; i < s.Length; i++)
        {
            var c = s[i];
            if (c != '\\')
            {
                sb.AddRange(Encoding.UTF8.GetBytes(c.ToString()));
                continue;
            }

            if (++i >= s.Length)
            {
                throw new FormatException("dangling backslash");
            }

            switch (s[i])
            {
                case 'r': sb.Add((byte)'\r'); break;
                case 'n': sb.Add((byte)'\n'); break;
                case 't': sb.Add((byte)'\t'); break;
                case '0': sb.Add(0); break;
                case '\\': sb.Add((byte)'\\'); break;
                case '"': sb.Add((byte)'"'); break;
                case 'x':
                    sb.Add(byte.Parse(s.AsSpan(i + 1, 2), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                    i += 2;
                    break;
                default: throw new FormatException($"unknown escape \\{s[i]}");
            }
        }

        return sb.ToArray();
    }

    /// <summary>Splits on blanks outside double quotes; backslash escapes are kept for <see cref="Unescape"/>.</summary>
    private static List<string> Tokenize(string line)
    {
        var words = new List<string>();
        var current = new StringBuilder();
        var inQuotes = false;
        for (var i = 0; i < line.Length; i++)
        {
            var c = line[i];
            if (inQuotes)
            {
                current.Append(c);
                if (c == '\\' && i + 1 < line.Length)
                {
                    current.Append(line[++i]);
                }
                else if (c == '"')
                {
                    inQuotes = false;
                }
            }
            else if (c == '"')
            {
                inQuotes = true;
                current.Append(c);
            }
            else if (c is ' ' or '\t')
            {
                if (current.Length > 0)
                {
                    words.Add(current.ToString());
                    current.Clear();
                }
            }
            else
            {
                current.Append(c);
            }
        }

        if (inQuotes)
        {
            throw new FormatException("unterminated string");
        }

        if (current.Length > 0)
        {
            words.Add(current.ToString());
        }

        return words;
    }
}
