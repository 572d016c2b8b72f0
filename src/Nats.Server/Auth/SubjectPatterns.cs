using Nats.Subjects;

namespace Nats.Server.Auth;

/// <summary>
/// An allow or deny list compiled for matching, with the semantics of the Go server's per-permission
/// Sublist: the tested subject's tokens are taken literally (a SUB to "foo.*" is matched as the
/// literal token "*", so allow "foo.*" admits it and allow "foo.bar" does not), a subject with an
/// empty token matches nothing, and an entry "subject queue" is a queue-group entry.
/// Lists are short, so a linear scan is used; callers cache results where it matters.
/// </summary>
internal sealed class SubjectPatterns
{
    private readonly Entry[] _entries;

    private SubjectPatterns(Entry[] entries)
    {
        _entries = entries;
    }

    public int Count => _entries.Length;

    /// <summary>Compiles entries; with <paramref name="allowQueues"/> "subject queue" entries become queue entries.</summary>
    public static SubjectPatterns Compile(IEnumerable<string> entries, bool allowQueues)
    {
        var compiled = new List<Entry>();
        foreach (var raw in entries)
        {
            string subject = raw;
            string? queue = null;
            if (allowQueues)
            {
                var fields = raw.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
                if (fields.Length == 0 || fields.Length > 2)
                {
                    continue;
                }
                subject = fields[0];
                queue = fields.Length == 2 ? fields[1] : null;
            }
            // Go's Sublist.Insert refuses malformed subjects and the permission code ignores the error.
            if (!SubjectRules.IsValid(subject))
            {
                continue;
            }
            compiled.Add(new Entry(subject, System.Text.Encoding.UTF8.GetBytes(subject), queue));
        }
        return new SubjectPatterns([.. compiled]);
    }

    /// <summary>
    /// True when a plain (non-queue) entry matches the subject bytes; used on the publish and delivery
    /// paths on a cache miss, so it works on the span without allocating.
    /// </summary>
    public bool MatchesPlain(ReadOnlySpan<byte> subject)
    {
        foreach (var entry in _entries)
        {
            if (entry.Queue is null && SubjectRules.Matches(subject, entry.Utf8))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>True when a plain (non-queue) entry matches.</summary>
    public bool MatchesPlain(string subject)
    {
        foreach (var entry in _entries)
        {
            if (entry.Queue is null && SubjectRules.Matches(subject, entry.Subject))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Go's Sublist.Match split into "any plain match" and the queue names of matching queue entries.</summary>
    public void Match(string subject, out bool anyPlain, out List<string>? queues)
    {
        anyPlain = false;
        queues = null;
        foreach (var entry in _entries)
        {
            if (!SubjectRules.Matches(subject, entry.Subject))
            {
                continue;
            }
            if (entry.Queue is null)
            {
                anyPlain = true;
            }
            else
            {
                (queues ??= []).Add(entry.Queue);
            }
        }
    }

    /// <summary>Go's queueMatches: a queue name matches literally, or as a subset of a wildcard queue entry.</summary>
    public static bool QueueMatches(string queue, List<string> queueEntries)
    {
        foreach (var name in queueEntries)
        {
            if (queue == name || (SubjectRules.HasWildcard(name) && SubjectRules.IsSubsetMatch(queue, name)))
            {
                return true;
            }
        }
        return false;
    }

    private readonly record struct Entry(string Subject, byte[] Utf8, string? Queue);
}
