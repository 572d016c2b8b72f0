namespace Nats.Storage.Subjects;

/// <summary>NATS subject wildcard rules: "*" matches one token, "&gt;" one or more trailing tokens.</summary>
internal static class SubjectMatch
{
    public static bool IsAll(string filter) => filter.Length == 0 || filter == ">";

    public static bool HasWildcard(string subject)
    {
        for (var i = 0; i < subject.Length; i++)
        {
            var c = subject[i];
            if ((c == '*' || c == '>')
                && (i == 0 || subject[i - 1] == '.')
                && (i + 1 == subject.Length || subject[i + 1] == '.'))
            {
                return true;
            }
        }
        return false;
    }

    public static string[] Tokenize(string subject) => subject.Split('.');

    /// <summary>Matches a literal subject against a tokenized filter without allocating.</summary>
    public static bool Matches(string subject, string[] filter)
    {
        var pos = 0;
        for (var t = 0; t < filter.Length; t++)
        {
            if (pos > subject.Length)
            {
                return false;
            }

            var end = subject.IndexOf('.', pos);
            if (end < 0)
            {
                end = subject.Length;
            }

            var ft = filter[t];
            if (ft == ">")
            {
                return true;
            }

            if (ft != "*" && !subject.AsSpan(pos, end - pos).SequenceEqual(ft))
            {
                return false;
            }

            pos = end + 1;
        }
        return pos > subject.Length;
    }

    public static bool Matches(string subject, string filter)
    {
        if (IsAll(filter))
        {
            return true;
        }

        if (!HasWildcard(filter))
        {
            return subject == filter;
        }

        return Matches(subject, Tokenize(filter));
    }

    /// <summary>True when every subject matching <paramref name="inner"/> also matches <paramref name="outer"/>.</summary>
    public static bool IsSubsetOf(string inner, string outer)
    {
        if (IsAll(outer))
        {
            return true;
        }

        var a = Tokenize(inner);
        var b = Tokenize(outer);
        for (var i = 0; i < b.Length; i++)
        {
            if (b[i] == ">")
            {
                return a.Length > i;
            }

            if (i >= a.Length)
            {
                return false;
            }

            if (b[i] == "*")
            {
                if (a[i] == ">")
                {
                    return false;
                }

                continue;
            }
            if (a[i] != b[i])
            {
                return false;
            }
        }
        return a.Length == b.Length;
    }
}
