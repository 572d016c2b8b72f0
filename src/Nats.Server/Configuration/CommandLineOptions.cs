using System.Globalization;

namespace Nats.Server.Configuration;

/// <summary>
/// nats-server's command line, parsed with Go's flag package rules: "-name", "--name", "-name=value",
/// "-name value" for non-boolean flags, booleans only as "-name" or "-name=false", parsing stops at the
/// first non-flag argument or "--", and a leftover "version"/"help" acts as a command. Flags given
/// explicitly override the configuration file, in argument order.
/// </summary>
internal sealed class CommandLineOptions
{
    private enum FlagKind { Bool, String, Int, Long }

    private sealed record Flag(FlagKind Kind, Action<CommandLineOptions, ServerOptions, object> Apply);

    private static readonly Dictionary<string, Flag> Flags = BuildFlags();

    /// <summary>Go flags we recognise but do not implement yet; named in the error so operators know why.</summary>
    private static readonly HashSet<string> NotYetSupported = new(StringComparer.Ordinal)
    {
        "ms", "s", "syslog", "r", "remote_syslog", "profile", "help_tls",
    };

    private readonly List<(Flag Flag, object Value)> _given = [];

    private CommandLineOptions()
    {
    }

    public string? ConfigFile { get; private set; }

    /// <summary>-t: validate the configuration file and exit.</summary>
    public bool CheckConfig { get; private set; }

    public bool ShowHelp { get; private set; }

    public bool ShowVersion { get; private set; }

    /// <summary>-sl/--signal "cmd[=pid|pidfile]": send a signal to a running server instead of starting one.</summary>
    public string? Signal { get; private set; }

    /// <summary>Parses arguments (without the program name). Throws <see cref="CommandLineException"/> on a usage error.</summary>
    public static CommandLineOptions Parse(IReadOnlyList<string> args)
    {
        var result = new CommandLineOptions();
        int i = 0;
        while (i < args.Count)
        {
            string arg = args[i];
            if (arg.Length < 2 || arg[0] != '-')
            {
                break;
            }
            i++;
            int dashes = arg[1] == '-' ? 2 : 1;
            if (dashes == 2 && arg.Length == 2)
            {
                break;
            }
            string name = arg[dashes..];
            if (name.Length == 0 || name[0] == '-' || name[0] == '=')
            {
                throw new CommandLineException($"bad flag syntax: {arg}");
            }
            string? value = null;
            int eq = name.IndexOf('=');
            if (eq >= 0)
            {
                value = name[(eq + 1)..];
                name = name[..eq];
            }
            if (!Flags.TryGetValue(name, out var flag))
            {
                throw new CommandLineException(NotYetSupported.Contains(name)
                    ? $"flag -{name} is not supported yet by nats-net-server"
                    : $"flag provided but not defined: -{name}");
            }
            if (flag.Kind == FlagKind.Bool)
            {
                bool b = true;
                if (value is not null && !TryParseGoBool(value, out b))
                {
                    throw new CommandLineException($"invalid boolean value \"{value}\" for -{name}: parse error");
                }
                result.Record(flag, b);
                continue;
            }
            if (value is null)
            {
                if (i >= args.Count)
                {
                    throw new CommandLineException($"flag needs an argument: -{name}");
                }
                value = args[i++];
            }
            result.Record(flag, flag.Kind switch
            {
                FlagKind.String => value,
                FlagKind.Int => (object)(int)ParseGoInt(value, name, int.MinValue, int.MaxValue),
                _ => ParseGoInt(value, name, long.MinValue, long.MaxValue),
            });
        }
        if (i < args.Count)
        {
            switch (args[i].ToLowerInvariant())
            {
                case "version":
                    result.ShowVersion = true;
                    break;
                case "help":
                    result.ShowHelp = true;
                    break;
                default:
                    throw new CommandLineException($"unrecognized command: \"{args[i]}\"");
            }
        }
        return result;
    }

    /// <summary>
    /// Builds the effective options: defaults, then the configuration file, then the explicit flags.
    /// Throws <see cref="ConfigurationException"/> when the file is invalid (with -t, warnings count as invalid,
    /// as in Go). Warnings that do not stop startup are returned.
    /// </summary>
    public ServerOptions BuildServerOptions(out IReadOnlyList<string> warnings)
    {
        var options = new ServerOptions();
        warnings = [];
        if (ConfigFile is not null)
        {
            var result = ConfigLoader.Load(options, ConfigFile);
            if (result.Errors.Count > 0 || (CheckConfig && result.Warnings.Count > 0))
            {
                throw new ConfigurationException(result.Errors, result.Warnings);
            }
            warnings = result.Warnings;
        }
        else if (CheckConfig)
        {
            throw new ConfigurationException("must specify [-c, --config] option to check configuration file syntax");
        }
        ApplyTo(options);
        return options;
    }

    /// <summary>Applies the explicitly given flags, in order, over whatever <paramref name="options"/> holds.</summary>
    public void ApplyTo(ServerOptions options)
    {
        foreach (var (flag, value) in _given)
        {
            flag.Apply(this, options, value);
        }
        ApplyTlsFlags(options);
    }

    // Go's -tls* handling: -tls=false drops the file's TLS; any other -tls* flag replaces it (overrideTLS).
    private bool _tlsDisabled;
    private bool _tlsOverride;
    private bool _tlsVerify;
    private string? _tlsCert;
    private string? _tlsKey;
    private string? _tlsCaCert;

    private void ApplyTlsFlags(ServerOptions options)
    {
        if (_tlsDisabled)
        {
            options.Tls = null;
            options.TlsContext = null;
            return;
        }
        if (!_tlsOverride)
        {
            return;
        }
        if (string.IsNullOrEmpty(_tlsCert))
        {
            throw new ConfigurationException("TLS Server certificate must be present and valid");
        }
        if (string.IsNullOrEmpty(_tlsKey))
        {
            throw new ConfigurationException("TLS Server private key must be present and valid");
        }
        var tls = new Tls.TlsOptions
        {
            CertFile = _tlsCert,
            KeyFile = _tlsKey,
            CaFile = string.IsNullOrEmpty(_tlsCaCert) ? null : _tlsCaCert,
            Verify = _tlsVerify,
            // The flags build a new config; the file's timeout still applies, as Go keeps TLSTimeout.
            Timeout = options.Tls?.Timeout ?? 0,
        };
        try
        {
            options.TlsContext = Tls.TlsServerContext.Create(tls);
        }
        catch (InvalidOperationException e)
        {
            throw new ConfigurationException(e.Message);
        }
        options.Tls = tls;
        ConfigBinder.ApplyTlsAuthTimeout(options);
    }

    private void RecordTlsFlag(string name, object value)
    {
        if (name == "tls")
        {
            _tlsDisabled = !(bool)value;
            _tlsOverride = !_tlsDisabled;
            return;
        }
        if (!_tlsDisabled)
        {
            _tlsOverride = true;
        }
        switch (name)
        {
            case "tlsverify":
                _tlsVerify = (bool)value;
                break;
            case "tlscert":
                _tlsCert = (string)value;
                break;
            case "tlskey":
                _tlsKey = (string)value;
                break;
            case "tlscacert":
                _tlsCaCert = (string)value;
                break;
        }
    }

    private void Record(Flag flag, object value)
    {
        _given.Add((flag, value));
        // Flags that steer parsing itself take effect now, not when options are built.
        flag.Apply(this, new ServerOptions(), value);
    }

    private static Dictionary<string, Flag> BuildFlags()
    {
        var flags = new Dictionary<string, Flag>(StringComparer.Ordinal);
        void Add(FlagKind kind, Action<CommandLineOptions, ServerOptions, object> apply, params string[] names)
        {
            foreach (var name in names)
            {
                flags[name] = new Flag(kind, apply);
            }
        }

        Add(FlagKind.Bool, (c, _, v) => c.ShowHelp |= (bool)v, "h", "help");
        Add(FlagKind.Bool, (c, _, v) => c.ShowVersion |= (bool)v, "v", "version");
        Add(FlagKind.Bool, (c, _, v) => c.CheckConfig = (bool)v, "t");
        Add(FlagKind.String, (c, _, v) => c.ConfigFile = (string)v == "" ? null : (string)v, "c", "config");
        // Go treats -1 as "random port"; we also accept 0 for it, as our listener binds port 0 to a free port.
        Add(FlagKind.Int, (_, o, v) => o.Port = (int)v is -1 or 0 ? 0 : (int)v, "p", "port");
        Add(FlagKind.String, (_, o, v) => o.ServerName = (string)v, "n", "name", "server_name");
        Add(FlagKind.String, (_, o, v) => o.Host = (string)v, "a", "addr", "net");
        Add(FlagKind.String, (_, o, v) => o.ClientAdvertise = (string)v, "client_advertise");
        Add(FlagKind.Bool, (_, o, v) => o.Debug = (bool)v, "D", "debug");
        Add(FlagKind.Bool, (_, o, v) => o.Trace = (bool)v, "V", "trace");
        Add(FlagKind.Bool, (_, o, v) => o.Trace = o.TraceVerbose = (bool)v, "VV");
        Add(FlagKind.Bool, (_, o, v) => o.Debug = o.Trace = (bool)v, "DV");
        Add(FlagKind.Bool, (_, o, v) => o.Debug = o.Trace = o.TraceVerbose = (bool)v, "DVV");
        Add(FlagKind.Bool, (_, o, v) => o.Logtime = (bool)v, "T", "logtime");
        Add(FlagKind.Bool, (_, o, v) => o.LogtimeUtc = (bool)v, "logtime_utc");
        Add(FlagKind.String, (_, o, v) => o.LogFile = (string)v, "l", "log");
        Add(FlagKind.Long, (_, o, v) => o.LogSizeLimit = (long)v, "log_size_limit");
        Add(FlagKind.Int, (_, o, v) => o.MaxTracedMsgLen = (int)v, "max_traced_msg_len");
        Add(FlagKind.String, (_, o, v) => o.PidFile = (string)v, "P", "pid");
        Add(FlagKind.String, (c, _, v) => c.Signal = (string)v == "" ? null : (string)v, "sl", "signal");
        Add(FlagKind.String, (_, o, v) => o.PortsFileDir = (string)v, "ports_file_dir");
        Add(FlagKind.Bool, (_, o, v) => o.JetStream.Enabled = (bool)v, "js", "jetstream");
        Add(FlagKind.String, (_, o, v) => o.JetStream.StoreDir = (string)v, "sd", "store_dir");
        Add(FlagKind.String, (_, o, v) => o.Username = (string)v, "user");
        Add(FlagKind.String, (_, o, v) => o.Password = (string)v, "pass");
        Add(FlagKind.String, (_, o, v) => o.AuthToken = (string)v, "auth");
        Add(FlagKind.Int, (_, o, v) => o.HttpPort = (int)v, "m", "http_port");
        Add(FlagKind.Int, (_, o, v) => o.HttpsPort = (int)v, "ms", "https_port");
        Add(FlagKind.String, (_, o, v) => Routes.ClusterConfigBinder.ApplyListenUrl(o.Cluster, (string)v), "cluster", "cluster_listen");
        Add(FlagKind.String, (_, o, v) => o.Cluster.Name = (string)v, "cluster_name");
        Add(FlagKind.String, (_, o, v) => o.Cluster.Routes = Routes.ClusterConfigBinder.ParseRoutesFlag((string)v), "routes");
        Add(FlagKind.String, (_, o, v) => o.Cluster.Advertise = (string)v, "cluster_advertise");
        Add(FlagKind.Bool, (_, o, v) => o.Cluster.NoAdvertise = (bool)v, "no_advertise");
        Add(FlagKind.Int, (_, o, v) => o.Cluster.ConnectRetries = (int)v, "connect_retries");
        Add(FlagKind.Bool, (c, _, v) => c.RecordTlsFlag("tls", v), "tls");
        Add(FlagKind.Bool, (c, _, v) => c.RecordTlsFlag("tlsverify", v), "tlsverify");
        Add(FlagKind.String, (c, _, v) => c.RecordTlsFlag("tlscert", v), "tlscert");
        Add(FlagKind.String, (c, _, v) => c.RecordTlsFlag("tlskey", v), "tlskey");
        Add(FlagKind.String, (c, _, v) => c.RecordTlsFlag("tlscacert", v), "tlscacert");
        return flags;
    }

    /// <summary>strconv.ParseBool's accepted spellings.</summary>
    private static bool TryParseGoBool(string s, out bool value)
    {
        switch (s)
        {
            case "1" or "t" or "T" or "TRUE" or "true" or "True":
                value = true;
                return true;
            case "0" or "f" or "F" or "FALSE" or "false" or "False":
                value = false;
                return true;
            default:
                value = false;
                return false;
        }
    }

    /// <summary>strconv.ParseInt with base 0: optional sign, then 0x/0o/0b/0 prefixes or decimal.</summary>
    private static long ParseGoInt(string s, string flag, long min, long max)
    {
        string body = s;
        bool negative = false;
        if (body.Length > 0 && (body[0] == '-' || body[0] == '+'))
        {
            negative = body[0] == '-';
            body = body[1..];
        }
        int radix = 10;
        if (body.Length > 1 && body[0] == '0')
        {
            (radix, body) = char.ToLowerInvariant(body[1]) switch
            {
                'x' => (16, body[2..]),
                'b' => (2, body[2..]),
                'o' => (8, body[2..]),
                _ => (8, body[1..]),
            };
            body = body.Replace("_", "");
        }
        if (body.Length == 0)
        {
            throw new CommandLineException($"invalid value \"{s}\" for flag -{flag}: parse error");
        }
        System.Numerics.BigInteger n = 0;
        foreach (char c in body)
        {
            int digit = c switch
            {
                >= '0' and <= '9' => c - '0',
                >= 'a' and <= 'z' => c - 'a' + 10,
                >= 'A' and <= 'Z' => c - 'A' + 10,
                _ => 99,
            };
            if (digit >= radix)
            {
                throw new CommandLineException($"invalid value \"{s}\" for flag -{flag}: parse error");
            }
            n = n * radix + digit;
        }
        if (negative)
        {
            n = -n;
        }
        if (n < min || n > max)
        {
            throw new CommandLineException($"invalid value \"{s}\" for flag -{flag}: value out of range");
        }
        return (long)n;
    }
}

/// <summary>A command line that cannot be used; the message is Go's flag package wording.</summary>
internal sealed class CommandLineException(string message) : Exception(message);
