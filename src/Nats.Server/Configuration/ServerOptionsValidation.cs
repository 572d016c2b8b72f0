namespace Nats.Server.Configuration;

/// <summary>Cross-field checks the Go server makes when creating a server (validateOptions), not at parse time.</summary>
internal static class ServerOptionsValidation
{
    /// <summary>Returns the first problem in Go's wording, or null when the options are usable.</summary>
    public static string? Validate(ServerOptions options)
    {
        if (options.LameDuckDuration > TimeSpan.Zero && options.LameDuckGracePeriod >= options.LameDuckDuration)
        {
            return $"lame duck grace period ({GoDuration.Format(options.LameDuckGracePeriod)}) should be strictly lower than lame duck duration ({GoDuration.Format(options.LameDuckDuration)})";
        }
        if (options.MaxPayload > options.MaxPending)
        {
            return $"max_payload ({options.MaxPayload}) cannot be higher than max_pending ({options.MaxPending})";
        }
        if (Auth.Jwt.OperatorValidation.Validate(options) is { } operatorError)
        {
            return operatorError;
        }
        if (Auth.AuthConfigBinder.ValidateNoAuthUser(options) is { } noAuthUserError)
        {
            return noAuthUserError;
        }
        if (WebSocket.WebSocketConfigBinder.Validate(options) is { } webSocketError)
        {
            return webSocketError;
        }
        if (Gateways.GatewayValidation.Validate(options) is { } gatewayError)
        {
            return gatewayError;
        }
        // Go's validateJetStreamOptions: a JetStream cluster names its servers and itself.
        if (options.JetStream.Enabled && options.Cluster.Enabled)
        {
            if (string.IsNullOrEmpty(options.ServerName))
            {
                return "jetstream cluster requires `server_name` to be set";
            }
            if (string.IsNullOrEmpty(options.Cluster.Name))
            {
                return "jetstream cluster requires `cluster.name` to be set";
            }
        }
        var system = options.SystemAccount;
        // In operator mode the resolver provides the system account, when the server starts.
        if (!string.IsNullOrEmpty(system) && !options.Operator.Enabled && !options.Accounts.Any(a => a.Name == system))
        {
            return "error resolving system account: account missing";
        }
        return Mqtt.MqttConfigBinder.Validate(options);
    }
}
