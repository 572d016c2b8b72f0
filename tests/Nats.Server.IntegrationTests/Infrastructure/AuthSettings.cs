using System.Globalization;
using System.Text;
using Nats.Server.Auth;
using Nats.Server.Configuration;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// Users, nkeys and permissions for a script's <c>server:</c> line, rendered both as a Go
/// <c>authorization { users: [...] }</c> block and as <see cref="ServerOptions"/>:
/// <list type="bullet">
/// <item><c>users=alice:pw,bob:pw2</c> (a password may be a bcrypt hash), <c>nkeys=UABC...,UDEF...</c></item>
/// <item><c>pub_allow.alice=a,b.&gt;</c>, <c>pub_deny.alice=...</c>, <c>sub_allow.alice="foo q",bar</c>,
/// <c>sub_deny.alice=...</c> (queue entries in double quotes), <c>responses.alice=true</c> or
/// <c>responses.alice=MAX/EXPIRES</c> (e.g. <c>2/1m</c>); the user may be an nkey, or <c>@default</c>
/// for default_permissions</item>
/// <item><c>conn_types.alice=STANDARD,WEBSOCKET</c> (allowed_connection_types)</item>
/// <item><c>no_auth_user=alice</c></item>
/// </list>
/// </summary>
internal sealed class AuthSettings
{
    public const string DefaultPermissionsName = "@default";

    private readonly List<(string Name, string Password)> _users = [];
    private readonly List<string> _nkeys = [];
    private readonly Dictionary<string, PermissionSpec> _permissions = new(StringComparer.Ordinal);

    public string? NoAuthUser { get; private set; }

    public IReadOnlyList<(string Name, string Password)> Users => _users;

    public bool HasAuthorizationBlock => _users.Count > 0 || _nkeys.Count > 0 || _permissions.ContainsKey(DefaultPermissionsName);

    public bool TryParse(string key, string value)
    {
        switch (key)
        {
            case "users":
                foreach (var entry in SplitList(value))
                {
                    var colon = entry.IndexOf(':');
                    if (colon <= 0)
                    {
                        throw new FormatException($"user '{entry}' is not name:password");
                    }

                    _users.Add((entry[..colon], entry[(colon + 1)..]));
                }

                return true;
            case "nkeys":
                _nkeys.AddRange(SplitList(value));
                return true;
            case "no_auth_user":
                NoAuthUser = value;
                return true;
        }

        var dot = key.IndexOf('.');
        if (dot <= 0)
        {
            return false;
        }

        var spec = Spec(key[(dot + 1)..]);
        switch (key[..dot])
        {
            case "pub_allow": spec.PubAllow = SplitList(value); return true;
            case "pub_deny": spec.PubDeny = SplitList(value); return true;
            case "sub_allow": spec.SubAllow = SplitList(value); return true;
            case "sub_deny": spec.SubDeny = SplitList(value); return true;
            case "conn_types": spec.ConnectionTypes = SplitList(value); return true;
            case "responses":
                if (value == "true")
                {
                    spec.Responses = (0, null);
                }
                else
                {
                    var parts = value.Split('/');
                    spec.Responses = (int.Parse(parts[0], CultureInfo.InvariantCulture), parts.Length > 1 ? parts[1] : null);
                }

                return true;
            default:
                return false;
        }
    }

    public void AppendGoTopLevel(StringBuilder sb)
    {
        if (NoAuthUser is not null)
        {
            sb.Append(CultureInfo.InvariantCulture, $"no_auth_user: {Quote(NoAuthUser)}\n");
        }
    }

    public void AppendGoAuthorization(StringBuilder sb)
    {
        if (_users.Count > 0 || _nkeys.Count > 0)
        {
            sb.Append("  users: [\n");
            foreach (var (name, password) in _users)
            {
                sb.Append(CultureInfo.InvariantCulture, $"    {{user: {Quote(name)}, password: {Quote(password)}");
                AppendGoPermissions(sb, name, "permissions");
                AppendGoConnectionTypes(sb, name);
                sb.Append("}\n");
            }

            foreach (var nkey in _nkeys)
            {
                sb.Append(CultureInfo.InvariantCulture, $"    {{nkey: {Quote(nkey)}");
                AppendGoPermissions(sb, nkey, "permissions");
                AppendGoConnectionTypes(sb, nkey);
                sb.Append("}\n");
            }

            sb.Append("  ]\n");
        }

        if (_permissions.ContainsKey(DefaultPermissionsName))
        {
            var block = new StringBuilder();
            AppendGoPermissions(block, DefaultPermissionsName, "default_permissions");
            sb.Append("  ").Append(block.ToString(2, block.Length - 2)).Append('\n');
        }
    }

    public void Apply(ServerOptions options)
    {
        options.NoAuthUser = NoAuthUser;
        if (_users.Count > 0)
        {
            options.Users = _users.Select(u => new User
            {
                Username = u.Name,
                Password = u.Password,
                Permissions = ToPermissions(u.Name),
                AllowedConnectionTypes = ConnectionTypesOf(u.Name),
            }).ToList();
        }

        if (_nkeys.Count > 0)
        {
            options.Nkeys = _nkeys.Select(k => new NkeyUser { Nkey = k, Permissions = ToPermissions(k), AllowedConnectionTypes = ConnectionTypesOf(k) }).ToList();
        }

        options.DefaultPermissions = ToPermissions(DefaultPermissionsName);
    }

    private PermissionSpec Spec(string name)
    {
        if (!_permissions.TryGetValue(name, out var spec))
        {
            spec = new PermissionSpec();
            _permissions[name] = spec;
        }

        return spec;
    }

    private List<string>? ConnectionTypesOf(string name) =>
        _permissions.TryGetValue(name, out var spec) ? spec.ConnectionTypes?.Select(t => t.ToUpperInvariant()).ToList() : null;

    private void AppendGoConnectionTypes(StringBuilder sb, string name)
    {
        if (_permissions.TryGetValue(name, out var spec) && spec.ConnectionTypes is { } types)
        {
            sb.Append(CultureInfo.InvariantCulture, $", allowed_connection_types: [{string.Join(", ", types.Select(Quote))}]");
        }
    }

    private Permissions? ToPermissions(string name)
    {
        if (!_permissions.TryGetValue(name, out var spec)
            || (spec.PubAllow, spec.PubDeny, spec.SubAllow, spec.SubDeny, spec.Responses) == (null, null, null, null, null))
        {
            return null;
        }

        var p = new Permissions();
        if (spec.PubAllow is not null || spec.PubDeny is not null)
        {
            p.Publish = new SubjectPermission { Allow = spec.PubAllow, Deny = spec.PubDeny };
        }

        if (spec.SubAllow is not null || spec.SubDeny is not null)
        {
            p.Subscribe = new SubjectPermission { Allow = spec.SubAllow, Deny = spec.SubDeny };
        }

        if (spec.Responses is { } r)
        {
            p.Response = new ResponsePermission
            {
                MaxMsgs = r.Max,
                Expires = r.Expires is null ? TimeSpan.Zero : ParseDuration(r.Expires),
            };
        }

        // Same normalisation as the Go config parser applies before the server sees the permissions.
        if (p.Response is not null)
        {
            p.Publish ??= new SubjectPermission();
            p.Publish.Allow ??= [];
        }

        return p;
    }

    private void AppendGoPermissions(StringBuilder sb, string name, string key)
    {
        if (!_permissions.TryGetValue(name, out var spec)
            || (spec.PubAllow, spec.PubDeny, spec.SubAllow, spec.SubDeny, spec.Responses) == (null, null, null, null, null))
        {
            return;
        }

        var parts = new List<string>();
        if (spec.PubAllow is not null || spec.PubDeny is not null)
        {
            parts.Add($"publish: {{{Lists(spec.PubAllow, spec.PubDeny)}}}");
        }

        if (spec.SubAllow is not null || spec.SubDeny is not null)
        {
            parts.Add($"subscribe: {{{Lists(spec.SubAllow, spec.SubDeny)}}}");
        }

        if (spec.Responses is { } r)
        {
            parts.Add(r.Max == 0 && r.Expires is null
                ? "allow_responses: true"
                : string.Create(CultureInfo.InvariantCulture, $"allow_responses: {{max: {r.Max}{(r.Expires is null ? "" : ", expires: " + Quote(r.Expires))}}}"));
        }

        sb.Append(CultureInfo.InvariantCulture, $", {key}: {{{string.Join(", ", parts)}}}");
    }

    private static string Lists(List<string>? allow, List<string>? deny)
    {
        var parts = new List<string>();
        if (allow is not null)
        {
            parts.Add($"allow: [{string.Join(", ", allow.Select(Quote))}]");
        }

        if (deny is not null)
        {
            parts.Add($"deny: [{string.Join(", ", deny.Select(Quote))}]");
        }

        return string.Join(", ", parts);
    }

    private static TimeSpan ParseDuration(string text)
    {
        var unit = text[^1];
        var amount = double.Parse(text.AsSpan(0, text.Length - (text.EndsWith("ms", StringComparison.Ordinal) ? 2 : 1)), CultureInfo.InvariantCulture);
        return text.EndsWith("ms", StringComparison.Ordinal) ? TimeSpan.FromMilliseconds(amount)
            : unit switch
            {
                's' => TimeSpan.FromSeconds(amount),
                'm' => TimeSpan.FromMinutes(amount),
                'h' => TimeSpan.FromHours(amount),
                _ => throw new FormatException($"duration '{text}' needs a unit (ms, s, m, h)"),
            };
    }

    /// <summary>Comma-separated entries; a double-quoted entry may hold blanks ("subject queue").</summary>
    private static List<string> SplitList(string value)
    {
        var result = new List<string>();
        var current = new StringBuilder();
        var quoted = false;
        foreach (var c in value)
        {
            if (c == '"')
            {
                quoted = !quoted;
            }
            else if (c == ',' && !quoted)
            {
                result.Add(current.ToString());
                current.Clear();
            }
            else
            {
                current.Append(c);
            }
        }

        result.Add(current.ToString());
        return result;
    }

    private static string Quote(string value) => "\"" + value.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";

    private sealed class PermissionSpec
    {
        public List<string>? PubAllow { get; set; }
        public List<string>? PubDeny { get; set; }
        public List<string>? SubAllow { get; set; }
        public List<string>? SubDeny { get; set; }
        public (int Max, string? Expires)? Responses { get; set; }
        public List<string>? ConnectionTypes { get; set; }
    }
}
