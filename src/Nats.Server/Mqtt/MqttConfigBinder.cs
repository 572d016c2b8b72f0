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
        ConfigBlock.ForEach(map, errors, (key, item) =>
        {
            switch (key)
            {
                case "listen":
                    var (host, port) = item.HostPort();
                    // A bare port keeps the default host.
                    mqtt.Host = host ?? mqtt.Host;
                    mqtt.Port = port;
                    return true;
                case "port":
                    mqtt.Port = (int)item.Int64();
                    return true;
                case "host" or "net":
                    mqtt.Host = item.String();
                    return true;
                case "tls":
                    BindTls(item, mqtt, errors);
                    return true;
                case "authorization" or "authentication":
                    BindAuthorization(item, mqtt, errors);
                    return true;
                case "no_auth_user":
                    mqtt.NoAuthUser = item.String();
                    return true;
                case "ack_wait" or "ackwait":
                    mqtt.AckWait = item.Duration("ack_wait", warnings);
                    return true;
                case "max_ack_pending" or "max_pending" or "max_inflight":
                    var pending = item.Int64();
                    if (pending is < 0 or > 0xFFFF)
                    {
                        throw new ConfigBindException(item, $"invalid value {pending}, should in [0..{0xFFFF}] range");
                    }
                    mqtt.MaxAckPending = (int)pending;
                    return true;
                case "max_keep_alive":
                    // Ours (MQTT 5's Server Keep Alive).
                    var keepAlive = item.Int64();
                    if (keepAlive is < 0 or > 0xFFFF)
                    {
                        throw new ConfigBindException(item, $"invalid value {keepAlive}, should in [0..{0xFFFF}] range");
                    }
                    mqtt.MaxKeepAlive = (ushort)keepAlive;
                    return true;
                case "receive_maximum":
                    // Ours (MQTT 5; Go speaks 3.1.1 only).
                    var receive = item.Int64();
                    if (receive is < 0 or > 0xFFFF)
                    {
                        throw new ConfigBindException(item, $"invalid value {receive}, should in [0..{0xFFFF}] range");
                    }
                    mqtt.ReceiveMaximum = (ushort)receive;
                    return true;
                case "js_domain":
                    mqtt.JsDomain = item.String();
                    return true;
                case "stream_replicas":
                    mqtt.StreamReplicas = (int)item.Int64();
                    return true;
                case "consumer_replicas":
                    mqtt.ConsumerReplicas = (int)item.Int64();
                    return true;
                case "consumer_memory_storage":
                    mqtt.ConsumerMemoryStorage = item.Bool();
                    return true;
                case "consumer_inactive_threshold" or "consumer_auto_cleanup":
                    mqtt.ConsumerInactiveThreshold = item.Duration("consumer_inactive_threshold", warnings);
                    return true;
                default:
                    return false;
            }
        });
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

    /// <summary>
    /// Go's parseSimpleAuth: user/pass, token and timeout; users lists are not allowed here. A value of the
    /// wrong type ends the block (Go's panic there), so this loop lets the mismatch reach the mqtt block's.
    /// </summary>
    private static void BindAuthorization(ConfigValue v, MqttOptions mqtt, List<string> errors)
    {
        foreach (var (key, item) in v.Map())
        {
            switch (key.ToLowerInvariant())
            {
                case "user" or "username":
                    mqtt.Username = item.String();
                    break;
                case "pass" or "password":
                    mqtt.Password = item.String();
                    break;
                case "token":
                    mqtt.Token = item.String();
                    break;
                case "timeout":
                    mqtt.AuthTimeout = TimeSpan.FromSeconds(item.SecondsOrOne());
                    break;
                default:
                    ConfigBlock.Unknown(key, item, errors);
                    break;
            }
        }
    }
}
