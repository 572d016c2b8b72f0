using Nats.Server.Configuration;

namespace Nats.Server.Mqtt;

/// <summary>
/// Binds the <c>mqtt</c> block with Go 2.9.10's parseMQTT keys, aliases and error texts; the
/// cross-field checks (server_name, JetStream) are in <see cref="Validate"/>, run at start-up as Go's
/// validateMQTTOptions is (so <c>-t</c> accepts such a file, as Go does).
/// </summary>
internal static class MqttConfigBinder
{
    public static void Bind(ConfigValue v, ServerOptions options, List<string> errors, List<string> warnings)
    {
        if (v.AsMap is not { } map)
        {
            errors.Add($"{v.Source}: Expected mqtt to be a map, got {v.GoTypeName}");
            return;
        }
        var mqtt = options.Mqtt;
        foreach (var (key, item) in map)
        {
            try
            {
                switch (key.ToLowerInvariant())
                {
                    case "listen":
                        BindListen(item, mqtt);
                        break;
                    case "port":
                        mqtt.Port = (int)Long(item);
                        break;
                    case "host" or "net":
                        mqtt.Host = Str(item);
                        break;
                    case "tls":
                        BindTls(item, mqtt, errors);
                        break;
                    case "authorization" or "authentication":
                        BindAuthorization(item, mqtt, errors);
                        break;
                    case "no_auth_user":
                        mqtt.NoAuthUser = Str(item);
                        break;
                    case "ack_wait" or "ackwait":
                        mqtt.AckWait = Duration("ack_wait", item, errors, warnings);
                        break;
                    case "max_ack_pending" or "max_pending" or "max_inflight":
                        var pending = Long(item);
                        if (pending is < 0 or > 0xFFFF)
                        {
                            errors.Add($"{item.Source}: invalid value {pending}, should in [0..{0xFFFF}] range");
                        }
                        else
                        {
                            mqtt.MaxAckPending = (int)pending;
                        }
                        break;
                    case "js_domain":
                        mqtt.JsDomain = Str(item);
                        break;
                    case "stream_replicas":
                        mqtt.StreamReplicas = (int)Long(item);
                        break;
                    case "consumer_replicas":
                        mqtt.ConsumerReplicas = (int)Long(item);
                        break;
                    case "consumer_memory_storage":
                        mqtt.ConsumerMemoryStorage = item.Value is bool b ? b : throw Mismatch(item, "bool");
                        break;
                    case "consumer_inactive_threshold" or "consumer_auto_cleanup":
                        mqtt.ConsumerInactiveThreshold = Duration("consumer_inactive_threshold", item, errors, warnings);
                        break;
                    default:
                        if (!item.UsedAsVariable)
                        {
                            errors.Add($"{item.Source}: unknown field {Auth.GoQuote.Quote(System.Text.Encoding.UTF8.GetBytes(key))}");
                        }
                        break;
                }
            }
            catch (MqttBindException e)
            {
                errors.Add(e.Message);
            }
        }
    }

    /// <summary>Go's validateMQTTOptions (2.9.10 order and texts); null when usable or MQTT is off.</summary>
    public static string? Validate(ServerOptions options)
    {
        var mqtt = options.Mqtt;
        if (mqtt.Port == 0)
        {
            return null;
        }
        if (string.IsNullOrEmpty(options.ServerName))
        {
            return "mqtt requires server name to be explicitly set";
        }
        if (!string.IsNullOrEmpty(mqtt.NoAuthUser))
        {
            if (options.Users is null)
            {
                return $"no_auth_user: \"{mqtt.NoAuthUser}\" present, but users are not defined";
            }
            if (!options.Users.Any(u => u.Username == mqtt.NoAuthUser))
            {
                return $"no_auth_user: \"{mqtt.NoAuthUser}\" not present as user in authorization block or account configuration";
            }
        }
        var hasUsers = options.Users is { Count: > 0 } || options.Nkeys is { Count: > 0 };
        if (hasUsers && !string.IsNullOrEmpty(mqtt.Username))
        {
            return "mqtt authentication username not compatible with presence of users/nkeys";
        }
        if (hasUsers && !string.IsNullOrEmpty(mqtt.Token))
        {
            return "mqtt authentication token not compatible with presence of users/nkeys";
        }
        if (mqtt.AckWait < TimeSpan.Zero)
        {
            return "ack wait must be a positive value";
        }
        if (!options.JetStream.Enabled)
        {
            return "mqtt requires JetStream to be enabled if running in standalone mode";
        }
        if (mqtt.ConsumerReplicas > 0 && mqtt.StreamReplicas > 0 && mqtt.ConsumerReplicas > mqtt.StreamReplicas)
        {
            return $"mqtt: consumer_replicas ({mqtt.ConsumerReplicas}) cannot be higher than stream_replicas ({mqtt.StreamReplicas})";
        }
        return null;
    }

    private static void BindListen(ConfigValue v, MqttOptions mqtt)
    {
        switch (v.Value)
        {
            case long port:
                mqtt.Port = (int)port;
                break;
            case string s when ConfigBinder.TrySplitHostPort(s, out var host, out var portText)
                && int.TryParse(portText, System.Globalization.NumberStyles.AllowLeadingSign, System.Globalization.CultureInfo.InvariantCulture, out var p):
                mqtt.Host = host;
                mqtt.Port = p;
                break;
            case string s:
                throw new MqttBindException($"{v.Source}: could not parse address string \"{s}\"");
            default:
                throw new MqttBindException($"{v.Source}: expected port or host:port, got {v.GoTypeName}");
        }
    }

    /// <summary>The server's tls {} parser (Go's parseTLS texts, the certificate pair checked at parse time).</summary>
    private static void BindTls(ConfigValue v, MqttOptions mqtt, List<string> errors)
    {
        if (Tls.TlsConfigBinder.Bind(v, errors) is not { } tls)
        {
            return;
        }
        try
        {
            mqtt.TlsContext = Tls.TlsServerContext.Create(tls);
        }
        catch (InvalidOperationException e)
        {
            errors.Add($"{v.Source}: {e.Message}");
        }
    }

    /// <summary>Go's parseSimpleAuth: user/pass, token and timeout; users lists are not allowed here.</summary>
    private static void BindAuthorization(ConfigValue v, MqttOptions mqtt, List<string> errors)
    {
        var map = v.AsMap ?? throw Mismatch(v, "map[string]interface {}");
        foreach (var (key, item) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "user" or "username":
                    mqtt.Username = Str(item);
                    break;
                case "pass" or "password":
                    mqtt.Password = Str(item);
                    break;
                case "token":
                    mqtt.Token = Str(item);
                    break;
                case "timeout":
                    mqtt.AuthTimeout = TimeSpan.FromSeconds(item.Value switch { long l => l, double d => d, _ => 1 });
                    break;
                default:
                    if (!item.UsedAsVariable)
                    {
                        errors.Add($"{item.Source}: unknown field {Auth.GoQuote.Quote(System.Text.Encoding.UTF8.GetBytes(key))}");
                    }
                    break;
            }
        }
    }

    private static TimeSpan Duration(string field, ConfigValue v, List<string> errors, List<string> warnings)
    {
        if (v.Value is string s)
        {
            if (GoDuration.TryParse(s, out var d, out var error))
            {
                return d;
            }
            errors.Add($"{v.Source}: error parsing {field}: {error}");
            return TimeSpan.Zero;
        }
        var seconds = Long(v);
        warnings.Add($"{v.Source}: invalid use of field \"{field}\": {field} should be converted to a duration");
        return TimeSpan.FromSeconds(seconds);
    }

    private static string Str(ConfigValue v) => v.Value as string ?? throw Mismatch(v, "string");

    private static long Long(ConfigValue v) => v.Value is long l ? l : throw Mismatch(v, "int64");

    private static MqttBindException Mismatch(ConfigValue v, string expected) =>
        new($"{v.Source}: interface conversion: interface {{}} is {v.GoTypeName}, not {expected}");

    private sealed class MqttBindException(string message) : Exception(message);
}
