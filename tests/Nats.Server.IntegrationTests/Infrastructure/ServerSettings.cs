using System.Globalization;
using System.Text;
using Nats.Server.Configuration;

namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>
/// The handful of server settings a test can ask for, expressed once and rendered both as a Go
/// configuration file and as our <see cref="ServerOptions"/>, so both servers run with the same limits.
/// </summary>
internal sealed class ServerSettings
{
    public string? User { get; set; }
    public string? Password { get; set; }
    public string? Token { get; set; }
    public double? AuthTimeoutSeconds { get; set; }
    public int? MaxPayload { get; set; }
    public int? MaxControlLine { get; set; }
    public int? MaxConnections { get; set; }
    public int? MaxSubscriptions { get; set; }
    public int? PingIntervalSeconds { get; set; }
    public int? PingMax { get; set; }
    public bool NoHeaderSupport { get; set; }

    /// <summary>JetStream on (-js), each server with a fresh store directory of its own (-sd).</summary>
    public bool JetStream { get; set; }

    /// <summary>With <see cref="JetStream"/>: reuse this store directory (restart tests) instead of a fresh one.</summary>
    public string? StoreDir { get; set; }

    /// <summary>
    /// Configuration text appended verbatim to the Go file and bound by our own config binder on top of the
    /// options below (accounts, system_account ...): the same text, read by each server's own parser.
    /// </summary>
    public List<string> RawConfig { get; } = [];

    /// <summary>
    /// Subject mappings, from <c>map.SOURCE=DEST</c> (a plain mapping) or <c>map.SOURCE=DEST@W|DEST@W</c>
    /// (weighted destinations, W in percent), rendered as a top-level <c>mappings</c> block.
    /// </summary>
    public List<(string Source, List<(string Subject, int? Weight)> Destinations)> Mappings { get; } = [];

    /// <summary>Users list, permissions, nkeys and no_auth_user (see <see cref="AuthSettings"/> for the script syntax).</summary>
    public AuthSettings Auth { get; } = new();

    /// <summary>Parses "key=value" pairs as written on a script's <c>server:</c> line.</summary>
    public static ServerSettings Parse(IEnumerable<string> pairs)
    {
        var s = new ServerSettings();
        foreach (var pair in pairs)
        {
            var eq = pair.IndexOf('=');
            if (eq <= 0)
            {
                throw new FormatException($"server setting '{pair}' is not key=value");
            }

            var key = pair[..eq];
            var value = pair[(eq + 1)..];
            if (key.StartsWith("map.", StringComparison.Ordinal))
            {
                s.Mappings.Add((key["map.".Length..], value.Split('|').Select(ParseDestination).ToList()));
                continue;
            }
            switch (key)
            {
                case "user": s.User = value; break;
                case "pass": s.Password = value; break;
                case "token": s.Token = value; break;
                case "auth_timeout": s.AuthTimeoutSeconds = double.Parse(value, CultureInfo.InvariantCulture); break;
                case "max_payload": s.MaxPayload = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "max_control_line": s.MaxControlLine = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "max_connections": s.MaxConnections = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "max_subscriptions": s.MaxSubscriptions = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "ping_interval": s.PingIntervalSeconds = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "ping_max": s.PingMax = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "no_header_support": s.NoHeaderSupport = bool.Parse(value); break;
                default:
                    if (!s.Auth.TryParse(key, value))
                    {
                        throw new FormatException($"unknown server setting '{key}'");
                    }

                    break;
            }
        }

        // The 2 s default auth timeout starts at accept; on a loaded CI machine a test client's CONNECT
        // can lag that far behind and both servers then (correctly) answer "Authentication Timeout".
        // Tests about the timeout set it explicitly; every other test gets a margin that only a hang uses.
        if (s.AuthTimeoutSeconds is null && (s.User is not null || s.Token is not null || s.Auth.HasAuthorizationBlock))
        {
            s.AuthTimeoutSeconds = GenerousAuthTimeoutSeconds;
        }

        return s;
    }

    public const double GenerousAuthTimeoutSeconds = 10;

    private static (string Subject, int? Weight) ParseDestination(string text)
    {
        var at = text.LastIndexOf('@');
        return at < 0 ? (text, null) : (text[..at], int.Parse(text[(at + 1)..], CultureInfo.InvariantCulture));
    }

    /// <summary>Go configuration file text; empty when every setting is the default.</summary>
    public string ToGoConfig()
    {
        var sb = new StringBuilder();
        var inv = CultureInfo.InvariantCulture;
        if (MaxPayload is { } mp)
        {
            sb.Append(inv, $"max_payload: {mp}\n");
        }

        if (MaxControlLine is { } mcl)
        {
            sb.Append(inv, $"max_control_line: {mcl}\n");
        }

        if (MaxConnections is { } mc)
        {
            sb.Append(inv, $"max_connections: {mc}\n");
        }

        if (MaxSubscriptions is { } ms)
        {
            sb.Append(inv, $"max_subscriptions: {ms}\n");
        }

        if (PingIntervalSeconds is { } pi)
        {
            sb.Append(inv, $"ping_interval: \"{pi}s\"\n");
        }

        if (PingMax is { } pm)
        {
            sb.Append(inv, $"ping_max: {pm}\n");
        }

        if (NoHeaderSupport)
        {
            sb.Append("no_header_support: true\n");
        }

        if (Mappings.Count > 0)
        {
            sb.Append("mappings {\n");
            foreach (var (source, destinations) in Mappings)
            {
                if (destinations is [(var subject, null)])
                {
                    sb.Append(inv, $"  \"{source}\": \"{subject}\"\n");
                    continue;
                }
                var list = destinations.Select(d => $"{{destination: \"{d.Subject}\", weight: {d.Weight ?? 100}}}");
                sb.Append(inv, $"  \"{source}\": [{string.Join(", ", list)}]\n");
            }
            sb.Append("}\n");
        }
        Auth.AppendGoTopLevel(sb);
        if (User is not null || Token is not null || AuthTimeoutSeconds is not null || Auth.HasAuthorizationBlock)
        {
            sb.Append("authorization {\n");
            Auth.AppendGoAuthorization(sb);
            if (User is not null)
            {
                sb.Append(inv, $"  user: \"{User}\"\n");
            }

            if (Password is not null)
            {
                sb.Append(inv, $"  password: \"{Password}\"\n");
            }

            if (Token is not null)
            {
                sb.Append(inv, $"  token: \"{Token}\"\n");
            }

            if (AuthTimeoutSeconds is { } at)
            {
                sb.Append(inv, $"  timeout: {at}\n");
            }

            sb.Append("}\n");
        }

        foreach (var line in RawConfig)
        {
            sb.Append(line).Append('\n');
        }

        return sb.ToString();
    }

    public ServerOptions ToServerOptions()
    {
        var o = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        if (MaxPayload is { } mp)
        {
            o.MaxPayload = mp;
        }

        if (MaxControlLine is { } mcl)
        {
            o.MaxControlLine = mcl;
        }

        if (MaxConnections is { } mc)
        {
            o.MaxConnections = mc;
        }

        if (MaxSubscriptions is { } ms)
        {
            o.MaxSubscriptions = ms;
        }

        if (PingIntervalSeconds is { } pi)
        {
            o.PingInterval = TimeSpan.FromSeconds(pi);
        }

        if (PingMax is { } pm)
        {
            o.MaxPingsOut = pm;
        }

        if (AuthTimeoutSeconds is { } at)
        {
            o.AuthTimeout = TimeSpan.FromSeconds(at);
        }

        o.NoHeaderSupport = NoHeaderSupport;
        o.Mappings = Mappings
            .Select(m => new Nats.Server.Mappings.SubjectMapping(
                m.Source, m.Destinations.Select(d => new Nats.Server.Mappings.MappingDestination(d.Subject, d.Weight ?? 100)).ToList()))
            .ToList();
        o.Username = User;
        o.Password = Password;
        o.AuthToken = Token;
        Auth.Apply(o);
        if (RawConfig.Count > 0)
        {
            var bound = ConfigBinder.Bind(o, ConfigParser.Parse(string.Join('\n', RawConfig), "raw-config"));
            if (bound.Errors.Count > 0)
            {
                throw new InvalidOperationException("raw config rejected by our server: " + string.Join("; ", bound.Errors));
            }
        }
        return o;
    }
}
