using Nats.Subjects;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's processUserPermissionsTemplate: a scoped signing key's template may name tokens like
/// <c>{{name()}}</c>, <c>{{subject()}}</c>, <c>{{account-name()}}</c>, <c>{{account-subject()}}</c>,
/// <c>{{tag(key)}}</c> and <c>{{account-tag(key)}}</c>, filled in per user. A tag with several values
/// yields one subject per combination.
/// </summary>
internal static class PermissionTemplates
{
    /// <summary>The template's permissions for this user; null when a deny list produced an invalid subject (Go refuses the login).</summary>
    public static (JwtPermission Pub, JwtPermission Sub)? Apply(JwtUserPermissionLimits template, UserClaims user, AccountClaims account)
    {
        var pub = template.Pub ?? new JwtPermission();
        var sub = template.Sub ?? new JwtPermission();
        var subAllow = Expand(sub.Allow, user, account, failOnBadSubject: false, out _);
        var subDeny = Expand(sub.Deny, user, account, failOnBadSubject: true, out var bad1);
        var pubAllow = Expand(pub.Allow, user, account, failOnBadSubject: false, out _);
        var pubDeny = Expand(pub.Deny, user, account, failOnBadSubject: true, out var bad2);
        if (bad1 || bad2)
        {
            return null;
        }
        // An allow list that every template emptied must not turn into "allow all".
        if (sub.Allow is { Count: > 0 } && subAllow is not { Count: > 0 })
        {
            (subDeny ??= []).Add(">");
        }
        if (pub.Allow is { Count: > 0 } && pubAllow is not { Count: > 0 })
        {
            (pubDeny ??= []).Add(">");
        }
        return (new JwtPermission { Allow = pubAllow, Deny = pubDeny }, new JwtPermission { Allow = subAllow, Deny = subDeny });
    }

    private static List<string>? Expand(List<string>? list, UserClaims user, AccountClaims account, bool failOnBadSubject, out bool bad)
    {
        bad = false;
        if (list is null || !list.Any(s => s.Split('.').Any(IsTemplate)))
        {
            return list;
        }
        var emitted = new List<string>();
        foreach (var subject in list)
        {
            var tokens = subject.Split('.');
            var fixedTokens = new string?[tokens.Length];
            var tagValues = new List<List<string>>();
            for (var i = 0; i < tokens.Length; i++)
            {
                var token = tokens[i];
                if (!IsTemplate(token))
                {
                    fixedTokens[i] = token;
                    continue;
                }
                var op = token[2..^2].ToLowerInvariant();
                if (op == "name()")
                {
                    fixedTokens[i] = user.Name ?? "";
                }
                else if (op == "subject()")
                {
                    fixedTokens[i] = user.Subject;
                }
                else if (op == "account-name()")
                {
                    fixedTokens[i] = account.Name ?? "";
                }
                else if (op == "account-subject()")
                {
                    fixedTokens[i] = user.Nats.IssuerAccount ?? "";
                }
                else if ((op.StartsWith("tag(", StringComparison.Ordinal) || op.StartsWith("account-tag(", StringComparison.Ordinal)) && op.EndsWith(')'))
                {
                    var accountTag = op.StartsWith("account-tag(", StringComparison.Ordinal);
                    var prefix = op[(accountTag ? "account-tag(".Length : "tag(".Length)..^1] + ":";
                    var tags = (accountTag ? account.Nats.Tags : user.Nats.Tags) ?? [];
                    var values = tags.Where(t => t.StartsWith(prefix, StringComparison.Ordinal)).Select(t => t[prefix.Length..]).ToList();
                    // An empty placeholder: filled from the tag values, or left empty to fail the subject check.
                    fixedTokens[i] = null;
                    if (values.Count > 0)
                    {
                        tagValues.Add(values);
                    }
                }
                else
                {
                    // An unknown function spoils the subject on purpose.
                    fixedTokens[i] = " ";
                }
            }
            foreach (var candidate in Combine(fixedTokens, tagValues))
            {
                if (SubjectRules.IsValid(candidate))
                {
                    emitted.Add(candidate);
                }
                else if (failOnBadSubject)
                {
                    bad = true;
                    return null;
                }
            }
        }
        return emitted;
    }

    private static IEnumerable<string> Combine(string?[] tokens, List<List<string>> tagValues)
    {
        if (tagValues.Count == 0)
        {
            yield return string.Join('.', tokens.Select(t => t ?? ""));
            yield break;
        }
        var index = new int[tagValues.Count];
        while (true)
        {
            var next = 0;
            yield return string.Join('.', tokens.Select(t => t ?? (next < index.Length ? tagValues[next][index[next++]] : "")));
            var j = index.Length - 1;
            while (j >= 0 && ++index[j] == tagValues[j].Count)
            {
                index[j--] = 0;
            }
            if (j < 0)
            {
                yield break;
            }
        }
    }

    private static bool IsTemplate(string token) => token.StartsWith("{{", StringComparison.Ordinal) && token.EndsWith("}}", StringComparison.Ordinal) && token.Length >= 4;
}
