namespace Nats.Server.Configuration;

/// <summary>
/// Maps a parsed configuration onto <see cref="ServerOptions"/>, following the Go server's
/// processConfigFileLine: keys are case-insensitive, aliases are accepted, a value of the wrong type
/// is an error naming file:line:column, unknown keys are errors unless used as $variables, and keys
/// Go understands but we do not implement yet are kept in <see cref="ServerOptions.UnsupportedConfig"/>.
/// All problems are collected rather than stopping at the first one.
/// </summary>
internal sealed class ConfigBinder
{
    /// <summary>Top-level keys nats-server 2.9.10 accepts that this server does not implement yet.</summary>
    internal static readonly HashSet<string> KnownUnsupportedKeys = new(StringComparer.Ordinal)
    {
        "disable_sublist_cache", "no_sublist_cache",
        "syslog", "remote_syslog", "prof_port", "max_sub_tokens", "max_subscription_tokens", "ocsp",
        "resolver_tls", "connect_error_reports",
        "reconnect_error_reports", "server_tags", "default_js_domain",
    };

    private readonly ServerOptions _options;
    private readonly List<string> _errors = [];
    private readonly List<string> _warnings = [];

    // Bound after every other key: Go's duplicate-user checks need the authorization block first.
    private ConfigValue? _accounts;

    private ConfigBinder(ServerOptions options) => _options = options;

    /// <summary>Applies <paramref name="config"/> to <paramref name="options"/>; returns errors and warnings (never throws for bad values).</summary>
    public static ConfigBindResult Bind(ServerOptions options, IReadOnlyDictionary<string, ConfigValue> config)
    {
        var binder = new ConfigBinder(options);
        foreach (var (key, value) in config)
        {
            try
            {
                binder.BindTopLevel(key, value);
            }
            catch (ConfigBindException e)
            {
                binder._errors.Add(e.Message);
            }
        }
        if (binder._accounts is not null)
        {
            Accounts.AccountConfigBinder.Bind(binder._accounts, options, binder._errors);
        }
        ApplyTlsAuthTimeout(options);
        // An explicit system_account wins over the operator JWT's, wherever it stands in the file.
        if (string.IsNullOrEmpty(options.SystemAccount) && options.Operator.OperatorSystemAccount is { } operatorSystem)
        {
            options.SystemAccount = operatorSystem;
        }
        return new ConfigBindResult(binder._errors, binder._warnings);
    }

    private void BindTopLevel(string key, ConfigValue v)
    {
        switch (key.ToLowerInvariant())
        {
            case "listen":
                var (host, port) = v.HostPort();
                // Go falls back to 0.0.0.0 for an empty host (":4222").
                _options.Host = string.IsNullOrEmpty(host) ? "0.0.0.0" : host;
                _options.Port = PortFromConfig(port);
                break;
            case "client_advertise":
                _options.ClientAdvertise = v.String();
                break;
            case "port":
                _options.Port = PortFromConfig(v.Int32(key));
                break;
            case "server_name":
                _options.ServerName = v.String();
                break;
            case "host":
            case "net":
                string h = v.String();
                _options.Host = h.Length == 0 ? "0.0.0.0" : h;
                break;
            case "debug":
                _options.Debug = v.Bool();
                break;
            case "trace":
                _options.Trace = v.Bool();
                break;
            case "trace_verbose":
                _options.TraceVerbose = _options.Trace = v.Bool();
                break;
            case "logtime":
                _options.Logtime = v.Bool();
                break;
            case "logtime_utc":
                _options.LogtimeUtc = v.Bool();
                break;
            case "logfile":
            case "log_file":
                _options.LogFile = v.String();
                break;
            case "logfile_size_limit":
            case "log_size_limit":
                _options.LogSizeLimit = v.Int64();
                break;
            case "pidfile":
            case "pid_file":
                _options.PidFile = v.String();
                break;
            case "ports_file_dir":
                _options.PortsFileDir = v.String();
                break;
            case "max_control_line":
                _options.MaxControlLine = OrDefault(v.Int32(key), ServerOptions.DefaultMaxControlLine);
                break;
            case "max_payload":
                _options.MaxPayload = OrDefault(v.Int32(key), ServerOptions.DefaultMaxPayload);
                break;
            case "max_pending":
                long pending = v.Int64();
                _options.MaxPending = pending == 0 ? ServerOptions.DefaultMaxPending : pending;
                break;
            case "max_connections":
            case "max_conn":
                _options.MaxConnections = OrDefault(v.Int32(key), ServerOptions.DefaultMaxConnections);
                break;
            case "max_traced_msg_len":
                _options.MaxTracedMsgLen = v.Int32(key);
                break;
            case "max_subscriptions":
            case "max_subs":
                _options.MaxSubscriptions = v.Int32(key);
                break;
            case "ping_interval":
                var ping = v.Duration("ping_interval", _warnings);
                _options.PingInterval = ping == TimeSpan.Zero ? TimeSpan.FromMinutes(2) : ping;
                break;
            case "ping_max":
                _options.MaxPingsOut = OrDefault(v.Int32(key), 2);
                break;
            case "write_deadline":
                var deadline = v.Duration("write_deadline", _warnings);
                _options.WriteDeadline = deadline == TimeSpan.Zero ? TimeSpan.FromSeconds(10) : deadline;
                break;
            case "http":
                var (httpHost, httpPort) = v.HostPort();
                _options.HttpHost = httpHost;
                _options.HttpPort = httpPort;
                break;
            case "https":
                var (httpsHost, httpsPort) = v.HostPort();
                _options.HttpHost = httpsHost;
                _options.HttpsPort = httpsPort;
                break;
            case "https_port":
                _options.HttpsPort = v.Int32(key);
                break;
            case "tls":
                BindTls(v);
                break;
            case "websocket":
            case "ws":
                _options.WebSocket = WebSocket.WebSocketConfigBinder.Bind(v, _errors);
                break;
            case "http_port":
            case "monitor_port":
                _options.HttpPort = v.Int32(key);
                break;
            case "http_base_path":
                _options.HttpBasePath = v.String();
                break;
            case "max_closed_clients":
                // Read since Go 2.11 (2.9.10 rejects the key); accepted here so 2.11+ configurations work.
                _options.MaxClosedClients = v.Int32(key);
                break;
            case "lame_duck_duration":
                var duration = v.DurationString("lame_duck_duration");
                if (duration < TimeSpan.FromSeconds(30))
                {
                    throw new ConfigBindException(v, $"invalid lame_duck_duration of {GoDuration.Format(duration)}, minimum is 30 seconds");
                }
                _options.LameDuckDuration = duration;
                break;
            case "lame_duck_grace_period":
                var grace = v.DurationString("lame_duck_grace_period");
                if (grace < TimeSpan.Zero)
                {
                    throw new ConfigBindException(v, "invalid lame_duck_grace_period, needs to be positive");
                }
                // Go keeps the default for 0.
                _options.LameDuckGracePeriod = grace == TimeSpan.Zero ? ServerOptions.DefaultLameDuckGracePeriod : grace;
                break;
            case "no_fast_producer_stall":
                _options.NoFastProducerStall = v.Bool();
                break;
            case "no_header_support":
                _options.NoHeaderSupport = v.Bool();
                break;
            case "allow_non_tls":
                _options.AllowNonTls = v.Bool();
                break;
            case "authorization":
                BindAuthorization(v);
                break;
            case "no_auth_user":
                _options.NoAuthUser = v.String();
                break;
            case "mappings":
            case "maps":
                // Each block is a $G account in Go's options; the last one's mappings are the ones used.
                _options.Mappings = Mappings.MappingConfigBinder.Bind(v, _errors);
                break;
            case "accounts":
                _accounts = v;
                break;
            case "system_account":
            case "system":
                _options.SystemAccount = v.Value as string ?? throw new ConfigBindException(v, "system account name must be a string");
                break;
            case "jetstream":
                if (JetStream.Configuration.JetStreamConfigBinder.BindServer(v, _options, _errors) is { } jsError)
                {
                    _errors.Add(jsError);
                }
                break;
            case "store_dir":
            case "storedir":
                // Go: the top level and the jetstream block may not both name it.
                if (_options.JetStream.StoreDir != "")
                {
                    throw new ConfigBindException(v, "Duplicate 'store_dir' configuration");
                }
                _options.JetStream.StoreDir = v.String();
                break;
            case "cluster":
                _options.Cluster = Routes.ClusterConfigBinder.Bind(v, _errors, _warnings);
                break;
            case "gateway":
                _options.Gateway = Gateways.GatewayConfigBinder.Bind(v, _errors);
                break;
            case "leaf":
            case "leafnodes":
                _options.LeafNodes = LeafNodes.LeafNodeConfigBinder.Bind(v, _errors, _warnings);
                break;
            case "mqtt":
                Mqtt.MqttConfigBinder.Bind(v, _options, _errors, _warnings);
                break;
            case "no_system_account":
            case "no_system":
            case "no_sys_acc":
                _options.NoSystemAccount = v.Bool();
                break;
            default:
                if (Auth.Jwt.OperatorConfigBinder.TryBind(key.ToLowerInvariant(), v, _options.Operator, _errors))
                {
                    break;
                }
                if (KnownUnsupportedKeys.Contains(key.ToLowerInvariant()))
                {
                    _options.UnsupportedConfig[key] = v;
                }
                else
                {
                    ConfigBlock.Unknown(key, v, _errors);
                }
                break;
        }
    }

    /// <summary>Go's parseTLS then GenTLSConfig: field errors point at the field, file errors at the block.</summary>
    private void BindTls(ConfigValue v)
    {
        if (Tls.TlsConfigBinder.Bind(v, _errors) is not { } tls)
        {
            return;
        }
        try
        {
            _options.TlsContext = Tls.TlsServerContext.Create(tls);
            _options.Tls = tls;
        }
        catch (InvalidOperationException e)
        {
            _errors.Add($"{v.Source}: {e.Message}");
        }
    }

    /// <summary>Go's getDefaultAuthTimeout: with TLS and no explicit authorization timeout, the tls timeout plus one second.</summary>
    internal static void ApplyTlsAuthTimeout(ServerOptions options)
    {
        if (options.Tls is { } tls && !options.AuthTimeoutExplicit)
        {
            options.AuthTimeout = TimeSpan.FromSeconds(tls.EffectiveTimeoutSeconds + 1);
        }
    }

    private void BindAuthorization(ConfigValue v)
    {
        string? user = null, password = null, token = null;
        double timeoutSeconds = 0;
        ConfigBlock.ForEach(v.Map(), _errors, (key, item) =>
        {
            switch (key)
            {
                case "user" or "username":
                    user = item.String();
                    return true;
                case "pass" or "password":
                    password = item.String();
                    return true;
                case "token":
                    token = item.String();
                    return true;
                case "timeout":
                    timeoutSeconds = item.SecondsOrOne();
                    return true;
                case "auth_callout" or "auth_hook":
                    _options.AuthCallout = Auth.Callout.AuthCalloutOptions.Bind(item, _errors);
                    return true;
                case "users" or "default_permission" or "default_permissions" or "permissions":
                    // Bound by the auth binder once the single user/token are known (below).
                    return true;
                default:
                    return false;
            }
        });
        _options.Username = user;
        _options.Password = password;
        _options.AuthToken = token;
        _options.AuthTimeout = timeoutSeconds == 0 ? TimeSpan.FromSeconds(2) : TimeSpan.FromSeconds(timeoutSeconds);
        _options.AuthTimeoutExplicit = timeoutSeconds != 0;
        foreach (var error in Auth.AuthConfigBinder.BindAuthorization((IDictionary<string, object>)v.ToPlain(), _options))
        {
            _errors.Add($"{v.Source}: {error}");
        }
        if ((!string.IsNullOrEmpty(user) || !string.IsNullOrEmpty(password)) && !string.IsNullOrEmpty(token))
        {
            _errors.Add($"{v.Source}: Cannot have a user/pass and token");
        }
    }

    /// <summary>Go maps port 0 in a file to the default and -1 to "any free port" (0 for our listener).</summary>
    private static int PortFromConfig(int port) => port switch
    {
        0 => ServerOptions.DefaultPort,
        -1 => 0,
        _ => port,
    };

    private static int OrDefault(int value, int fallback) => value == 0 ? fallback : value;
}

/// <summary>Outcome of binding: hard errors (the file is rejected) and warnings (reported, startup continues).</summary>
internal sealed record ConfigBindResult(IReadOnlyList<string> Errors, IReadOnlyList<string> Warnings);
