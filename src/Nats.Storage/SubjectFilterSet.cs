using Nats.Storage.Subjects;
using Nats.Subjects;

namespace Nats.Storage;

/// <summary>
/// The subject filters of a multi-filter consumer (Go's SimpleSublist in LoadNextMsgMulti and
/// NumPendingMulti). Duplicates are dropped; a set holding "&gt;" (or an empty filter) matches everything.
/// Build it once per consumer configuration and reuse it: queries do not allocate.
/// </summary>
internal sealed class SubjectFilterSet
{
    public SubjectFilterSet(IEnumerable<string> filters)
    {
        var list = new List<string>();
        foreach (var f in filters)
        {
            if (SubjectRules.IsMatchAll(f))
            {
                MatchesAll = true;
                list.Clear();
                list.Add(">");
                break;
            }
            if (!list.Contains(f, StringComparer.Ordinal))
            {
                list.Add(f);
            }
        }
        Filters = list.ToArray();
    }

    public IReadOnlyList<string> Filters { get; }

    public bool MatchesAll { get; }

    /// <summary>Does a literal subject match any filter of the set.</summary>
    public bool Matches(string subject)
    {
        if (MatchesAll)
        {
            return true;
        }

        foreach (var f in Filters)
        {
            if (SubjectRules.Matches(subject, f))
            {
                return true;
            }
        }
        return false;
    }
}
