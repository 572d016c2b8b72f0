namespace Nats.Server.JetStream;

/// <summary>Go's subject helpers that JetStream needs: SubjectsCollide and subjectIsSubsetMatch.</summary>
internal static class Subjects
{
    /// <summary>True when some literal subject matches both (either may hold wildcards).</summary>
    public static bool Collide(string a, string b)
    {
        if (a == b)
        {
            return true;
        }
        var ta = a.Split('.');
        var tb = b.Split('.');
        var fwcA = ta[^1] == ">";
        var fwcB = tb[^1] == ">";
        if ((ta.Length < tb.Length && !fwcA) || (tb.Length < ta.Length && !fwcB))
        {
            return false;
        }
        var stop = Math.Min(ta.Length, tb.Length);
        for (var i = 0; i < stop; i++)
        {
            var x = ta[i];
            var y = tb[i];
            if (x is "*" or ">" || y is "*" or ">")
            {
                continue;
            }
            if (x != y)
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>Every subject matching <paramref name="subject"/> also matches <paramref name="test"/>.</summary>
    public static bool IsSubset(string subject, string test) => Auth.SubjectPatterns.IsSubsetMatch(subject, test);

    public static bool IsValid(string subject) => Auth.SubjectPatterns.IsValidSubject(subject);

    public static bool IsLiteral(string subject) => !Auth.SubjectPatterns.HasWildcard(subject);

    public static bool Matches(string literal, string filter) => Storage.Subjects.SubjectMatch.Matches(literal, filter);
}
