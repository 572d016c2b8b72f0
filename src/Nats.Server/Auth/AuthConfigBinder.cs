using Nats.Server.Configuration;

namespace Nats.Server.Auth;

/// <summary>
/// Binds the users-related parts of a parsed configuration file onto <see cref="ServerOptions"/>, the way
/// Go's parseAuthorization / parseUsers / parseUserPermissions do. It takes the plain value tree
/// (maps as IDictionary&lt;string, object&gt;, lists, string, bool, long, double) so it does not depend on
/// the configuration parser's types; keys are matched case-insensitively, as in Go. Error texts follow Go's.
/// </summary>
internal static class AuthConfigBinder
{
    /// <summary>
    /// Binds <c>users</c>, <c>default_permissions</c> (also <c>default_permission</c>, <c>permissions</c>) from an
    /// authorization block. Single user/password/token/timeout are left to the main binder; conflicts with
    /// them are checked here. Returns the errors found (empty when the block is valid).
    /// </summary>
    public static List<string> BindAuthorization(IDictionary<string, object> block, ServerOptions options)
    {
        var errors = new List<string>();
        List<User>? users = null;
        List<NkeyUser>? nkeys = null;
        Permissions? defaults = null;
        foreach (var (key, value) in block)
        {
            switch (key.ToLowerInvariant())
            {
                case "users":
                    (nkeys, users) = ParseUsers(value, errors);
                    break;
                case "default_permission":
                case "default_permissions":
                case "permissions":
                    defaults = ParsePermissions(value, errors);
                    break;
            }
        }
        if (users is not null || nkeys is not null)
        {
            if (!string.IsNullOrEmpty(options.Username))
            {
                errors.Add("Can not have a single user/pass and a users array");
                return errors;
            }
            if (!string.IsNullOrEmpty(options.AuthToken))
            {
                errors.Add("Can not have a token and a users array");
                return errors;
            }
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var user in users ?? [])
            {
                if (!seen.Add(user.Username))
                {
                    errors.Add($"Duplicate user {GoConfigText.Quote(user.Username)} detected");
                }
            }
            options.Users = users ?? [];
            options.Nkeys = nkeys;
        }
        if (defaults is not null)
        {
            options.DefaultPermissions = defaults;
        }
        return errors;
    }

    /// <summary>Go's validateNoAuthUser, run once users and no_auth_user are both bound.</summary>
    public static string? ValidateNoAuthUser(ServerOptions options)
    {
        var name = options.NoAuthUser;
        if (string.IsNullOrEmpty(name))
        {
            return null;
        }
        if (options.Users is null)
        {
            return $"no_auth_user: \"{name}\" present, but users are not defined";
        }
        return options.Users.Any(u => u.Username == name)
            ? null
            : $"no_auth_user: \"{name}\" not present as user in authorization block or account configuration";
    }

    /// <summary>Go's parseUsers: entries with an nkey become nkey users, the rest user/password users.</summary>
    public static (List<NkeyUser>? Nkeys, List<User> Users) ParseUsers(object value, List<string> errors)
    {
        var users = new List<User>();
        List<NkeyUser>? nkeys = null;
        if (value is not System.Collections.IList list)
        {
            errors.Add($"Expected users field to be an array, got {value}");
            return (null, users);
        }
        foreach (var item in list)
        {
            if (item is not IDictionary<string, object> entry)
            {
                errors.Add($"Expected user entry to be a map/struct, got {item}");
                continue;
            }
            string? nkey = null, username = null, password = null;
            Permissions? permissions = null;
            List<string>? connectionTypes = null;
            foreach (var (key, v) in entry)
            {
                switch (key.ToLowerInvariant())
                {
                    case "nkey": nkey = v as string; break;
                    case "user":
                    case "username": username = v as string; break;
                    case "pass":
                    case "password": password = v as string; break;
                    case "permission":
                    case "permissions":
                    case "authorization": permissions = ParsePermissions(v, errors); break;
                    case "allowed_connection_types":
                    case "connection_types":
                    case "clients":
                        connectionTypes = ParseConnectionTypes(v, errors);
                        break;
                    default:
                        errors.Add(GoConfigText.UnknownField(key));
                        break;
                }
            }
            if (string.IsNullOrEmpty(nkey) && string.IsNullOrEmpty(username))
            {
                errors.Add("User entry requires a user");
                return (nkeys, users);
            }
            if (!string.IsNullOrEmpty(nkey))
            {
                if (!NKeys.IsValidPublicUserKey(nkey))
                {
                    errors.Add("Not a valid public nkey for a user");
                    return (nkeys, users);
                }
                if (!string.IsNullOrEmpty(username) || !string.IsNullOrEmpty(password))
                {
                    errors.Add("Nkey users do not take usernames or passwords");
                    return (nkeys, users);
                }
                (nkeys ??= []).Add(new NkeyUser { Nkey = nkey, Permissions = permissions, AllowedConnectionTypes = connectionTypes });
            }
            else
            {
                users.Add(new User { Username = username!, Password = password ?? "", Permissions = permissions, AllowedConnectionTypes = connectionTypes });
            }
        }
        return (nkeys, users);
    }

    /// <summary>Go's convertAllowedConnectionTypes: upper-cased known names; unknown ones are an error.</summary>
    private static List<string>? ParseConnectionTypes(object value, List<string> errors)
    {
        var names = value switch
        {
            string s => [s],
            System.Collections.IList list => list.OfType<object>().Select(o => o as string ?? "").ToList(),
            _ => null,
        };
        if (names is null)
        {
            errors.Add($"error parsing allowed connection types: unsupported type {GoConfigText.TypeName(value)}");
            return null;
        }
        var known = new List<string>();
        var unknown = new List<string>();
        foreach (var name in names)
        {
            var upper = name.ToUpperInvariant();
            (ConnectionTypes.IsKnown(upper) ? known : unknown).Add(upper);
        }
        if (unknown.Count > 0)
        {
            errors.Add($"invalid connection types [{string.Join(" ", unknown.Select(u => GoConfigText.Quote(u)))}]");
        }
        return known;
    }

    /// <summary>Go's parseUserPermissions: publish/subscribe (old list style or allow/deny maps) and allow_responses.</summary>
    public static Permissions? ParsePermissions(object value, List<string> errors)
    {
        if (value is not IDictionary<string, object> map)
        {
            errors.Add($"Expected permissions to be a map/struct, got {value}");
            return null;
        }
        var p = new Permissions();
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "pub":
                case "publish":
                case "import":
                    p.Publish = ParseSubjectPermission(v, errors);
                    break;
                case "sub":
                case "subscribe":
                case "export":
                    p.Subscribe = ParseSubjectPermission(v, errors);
                    break;
                case "publish_allow_responses":
                case "allow_responses":
                    p.Response = v switch
                    {
                        bool b => b ? new ResponsePermission() : null,
                        _ => ParseAllowResponses(v, errors),
                    };
                    if (p.Response is not null)
                    {
                        p.Publish ??= new SubjectPermission();
                        p.Publish.Allow ??= [];
                    }
                    break;
                default:
                    errors.Add($"Unknown field \"{key}\" parsing permissions");
                    break;
            }
        }
        return p;
    }

    private static SubjectPermission? ParseSubjectPermission(object value, List<string> errors)
    {
        if (value is not IDictionary<string, object> map)
        {
            // Old style: a subject or a list of subjects, all allowed.
            return new SubjectPermission { Allow = ParseSubjects(value, errors) };
        }
        if (map.Count == 0)
        {
            return null;
        }
        var p = new SubjectPermission();
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "allow": p.Allow = ParseSubjects(v, errors); break;
                case "deny": p.Deny = ParseSubjects(v, errors); break;
                default:
                    errors.Add($"Unknown field name \"{key}\" parsing subject permissions, only 'allow' or 'deny' are permitted");
                    break;
            }
        }
        return p;
    }

    /// <summary>
    /// A subject or list of subjects; like Go an empty list yields null (no restriction), and each entry
    /// must be a valid subject or "subject queue".
    /// </summary>
    private static List<string>? ParseSubjects(object value, List<string> errors)
    {
        List<string>? subjects = null;
        switch (value)
        {
            case string s:
                subjects = [s];
                break;
            case System.Collections.IList list:
                foreach (var item in list)
                {
                    if (item is not string subject)
                    {
                        errors.Add("Subject in permissions array cannot be cast to string");
                        return null;
                    }
                    (subjects ??= []).Add(subject);
                }
                break;
            default:
                errors.Add($"Expected subject permissions to be a subject, or array of subjects, got {GoConfigText.TypeName(value)}");
                return null;
        }
        foreach (var subject in subjects ?? [])
        {
            if (SubjectPatterns.IsValidSubject(subject))
            {
                continue;
            }
            var fields = subject.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            if (fields.Length != 2)
            {
                errors.Add($"subject \"{subject}\" is not a valid subject");
                return null;
            }
            if (!SubjectPatterns.IsValidSubject(fields[0]))
            {
                errors.Add($"subject \"{fields[0]}\" is not a valid subject");
                return null;
            }
        }
        return subjects;
    }

    private static ResponsePermission? ParseAllowResponses(object value, List<string> errors)
    {
        if (value is not IDictionary<string, object> map)
        {
            errors.Add("error parsing response permissions, expected a boolean or a map");
            return null;
        }
        var rp = new ResponsePermission();
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "max":
                case "max_msgs":
                case "max_messages":
                case "max_responses":
                    // Negative means unlimited; zero keeps the default.
                    if (v is long max && max != 0)
                    {
                        rp.MaxMsgs = (int)max;
                    }
                    break;
                case "expires":
                case "expiration":
                case "ttl":
                    if (v is not string text)
                    {
                        errors.Add("error parsing expires, not a duration string");
                        return null;
                    }
                    if (!GoDuration.TryParse(text, out var ttl, out _))
                    {
                        errors.Add($"error parsing expires: time: invalid duration \"{text}\"");
                        return null;
                    }
                    if (ttl != TimeSpan.Zero)
                    {
                        rp.Expires = ttl;
                    }
                    break;
                default:
                    errors.Add($"Unknown field \"{key}\" parsing permissions");
                    break;
            }
        }
        return rp;
    }
}
