using System.Text;

namespace Nats.Server.IntegrationTests.Differential;

/// <summary>Per-connection transcripts of one run, in the order connections were opened.</summary>
internal sealed class Transcripts
{
    private readonly List<(string Name, List<string> Lines)> _entries = new();

    public IReadOnlyList<(string Name, List<string> Lines)> Entries => _entries;

    public void Add(string name, List<string> lines) => _entries.Add((name, SortFanOut(lines)));

    /// <summary>
    /// When one message matches several subscriptions of the same connection, the order of those copies
    /// follows each server's subscription index layout, which clients cannot observe as meaningful. Runs of
    /// consecutive deliveries that differ only in the sid are therefore sorted; order between different
    /// messages is untouched.
    /// </summary>
    private static List<string> SortFanOut(List<string> lines)
    {
        var result = new List<string>(lines.Count);
        var i = 0;
        while (i < lines.Count)
        {
            var key = WithoutSid(lines[i]);
            var j = i + 1;
            while (key is not null && j < lines.Count && WithoutSid(lines[j]) == key)
            {
                j++;
            }

            var run = lines.GetRange(i, j - i);
            run.Sort(StringComparer.Ordinal);
            result.AddRange(run);
            i = j;
        }

        return result;
    }

    /// <summary>The delivery with its sid (second token) blanked, or null for non-deliveries.</summary>
    private static string? WithoutSid(string line)
    {
        if (!line.StartsWith("MSG ", StringComparison.Ordinal) && !line.StartsWith("HMSG ", StringComparison.Ordinal))
        {
            return null;
        }

        var first = line.IndexOf(' ');
        var second = line.IndexOf(' ', first + 1);
        var third = second < 0 ? -1 : line.IndexOf(' ', second + 1);
        return third < 0 ? line : line[..(second + 1)] + line[third..];
    }

    /// <summary>
    /// Queue group members may each receive any share of the messages; what must match is the combined
    /// multiset, so members are replaced by one sorted transcript.
    /// </summary>
    public void MergeUnordered(IEnumerable<string[]> groups)
    {
        foreach (var group in groups)
        {
            var merged = new List<string>();
            var firstIndex = -1;
            foreach (var member in group)
            {
                var i = _entries.FindIndex(e => e.Name == member);
                if (i < 0)
                {
                    throw new FormatException($"unordered group names unknown connection {member}");
                }

                merged.AddRange(_entries[i].Lines);
                firstIndex = firstIndex < 0 ? i : Math.Min(firstIndex, i);
            }

            merged.Sort(StringComparer.Ordinal);
            _entries.RemoveAll(e => group.Contains(e.Name));
            _entries.Insert(Math.Min(firstIndex, _entries.Count), (string.Join("+", group) + " (sorted)", merged));
        }
    }

    public string Render()
    {
        var sb = new StringBuilder();
        foreach (var (name, lines) in _entries)
        {
            sb.Append("== ").Append(name).Append('\n');
            foreach (var l in lines)
            {
                sb.Append("  ").Append(l).Append('\n');
            }
        }

        return sb.ToString();
    }

    /// <summary>A readable difference, or null when both runs said exactly the same things.</summary>
    public static string? Diff(Transcripts expected, string expectedLabel, Transcripts actual, string actualLabel)
    {
        var sb = new StringBuilder();
        var names = expected._entries.Select(e => e.Name).Union(actual._entries.Select(e => e.Name));
        foreach (var name in names)
        {
            var e = expected._entries.FirstOrDefault(x => x.Name == name).Lines ?? new List<string>();
            var a = actual._entries.FirstOrDefault(x => x.Name == name).Lines ?? new List<string>();
            if (e.SequenceEqual(a))
            {
                continue;
            }

            sb.Append("connection ").Append(name).Append(":\n");
            var n = Math.Max(e.Count, a.Count);
            for (var i = 0; i < n; i++)
            {
                var el = i < e.Count ? e[i] : "<nothing>";
                var al = i < a.Count ? a[i] : "<nothing>";
                var mark = el == al ? "   " : ">> ";
                sb.Append(mark).Append(expectedLabel).Append(": ").Append(el).Append('\n');
                if (el != al)
                {
                    sb.Append(mark).Append(actualLabel).Append(": ").Append(al).Append('\n');
                }
            }
        }

        return sb.Length == 0 ? null : sb.ToString();
    }
}
