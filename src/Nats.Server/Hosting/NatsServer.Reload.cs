using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Logging;

namespace Nats.Server.Hosting;

/// <summary>A configuration reload that was refused; the running configuration is unchanged.</summary>
internal sealed class ReloadException(string message) : Exception(message);

/// <summary>
/// Configuration reload (SIGHUP), following the Go server's Reload/ReloadOptions: re-read the file,
/// put the command-line flags back on top, diff against the running options, refuse what cannot
/// change, then swap the options and apply each change to the live server and its clients.
/// </summary>
internal sealed partial class NatsServer
{
    private readonly SemaphoreSlim _reloadLock = new(1, 1);

    /// <summary>When the configuration was last loaded (start or successful reload); /varz config_load_time.</summary>
    public DateTime ConfigLoadTime { get; private set; }

    /// <summary>Re-applies the command-line flags over a re-read configuration file (Go's FlagSnapshot); the flags win.</summary>
    public Action<ServerOptions>? CommandLineOverrides { get; set; }

    /// <summary>The executable's logging, reconfigured when a logging setting changes; null when the host logs elsewhere.</summary>
    public ServerLogging? Logging { get; set; }

    /// <summary>The ports file written for ports_file_dir (path), and the executable name used in its file name.</summary>
    public string? PortsFilePath { get; set; }

    public string PortsFileExecutableName { get; set; } = "nats-net-server";

    /// <summary>
    /// Reloads the configuration file the server was started with. Throws <see cref="ReloadException"/>
    /// with Go's error text when the file is invalid or a setting cannot be reloaded; the running
    /// configuration is then left exactly as it was.
    /// </summary>
    public async Task ReloadAsync()
    {
        var configFile = Options.ConfigFile;
        if (string.IsNullOrEmpty(configFile))
        {
            throw new ReloadException("can only reload config when a file is provided using -c or --config");
        }
        var options = new ServerOptions();
        try
        {
            var result = ConfigLoader.Load(options, configFile);
            if (result.Errors.Count > 0)
            {
                throw new ConfigurationException(result.Errors, result.Warnings);
            }
        }
        catch (ConfigurationException e)
        {
            throw new ReloadException(e.Message);
        }
        CommandLineOverrides?.Invoke(options);
        await ReloadAsync(options).ConfigureAwait(false);
    }

    /// <summary>Applies the given options as a reload (Go's ReloadOptions); same rules and errors as <see cref="ReloadAsync()"/>.</summary>
    public async Task ReloadAsync(ServerOptions newOptions)
    {
        await _reloadLock.WaitAsync().ConfigureAwait(false);
        try
        {
            ReloadLocked(newOptions);
        }
        finally
        {
            _reloadLock.Release();
        }
    }

    private void ReloadLocked(ServerOptions newOptions)
    {
        var current = Options;
        // A random port (0 after binding -1) keeps the one bound at start, as in Go.
        if (newOptions.Port == 0)
        {
            newOptions.Port = current.Port;
        }
        // Accounts are not reloaded; the made-up $G user of a system-account-only setup keeps its name (as in Go).
        _accounts.ReapplyGeneratedNoAuthUser(newOptions);
        var changes = ReloadPlan.Diff(current, newOptions, Port, out var error) ?? throw new ReloadException(error!);
        if (changes.Count > 0 && ServerOptionsValidation.Validate(newOptions) is { } invalid)
        {
            throw new ReloadException(invalid);
        }

        _options = newOptions;
        var reloadLogging = false;
        var reloadTrace = false;
        var reloadAuth = false;
        foreach (var change in changes)
        {
            switch (change.Effect)
            {
                case ReloadEffect.MaxConnections:
                    EnforceMaxConnections(newOptions.MaxConnections);
                    break;
                case ReloadEffect.PidFile:
                    if (string.IsNullOrEmpty(newOptions.PidFile))
                    {
                        // Go says nothing when the pid file setting is removed.
                        continue;
                    }
                    WritePidFile(newOptions.PidFile);
                    break;
                case ReloadEffect.PortsFileDir:
                    RewritePortsFile(newOptions);
                    break;
                case ReloadEffect.Cluster:
                    Cluster?.ApplyReload(newOptions.Cluster);
                    break;
                case ReloadEffect.Routes:
                    if (Cluster is { } cluster)
                    {
                        var (add, remove) = ReloadPlan.DiffRoutes(current.Cluster.Routes, newOptions.Cluster.Routes);
                        cluster.ReloadRoutes(add, remove);
                    }
                    break;
            }
            _logger.LogInformation("{Message}", change.Message);
            reloadLogging |= change.Effect is ReloadEffect.Logging or ReloadEffect.TraceLevel;
            reloadTrace |= change.Effect == ReloadEffect.TraceLevel;
            reloadAuth |= change.Effect == ReloadEffect.Authorization;
        }

        if (reloadLogging && Logging is { } logging)
        {
            try
            {
                logging.Apply(newOptions);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                _logger.LogError("Error opening log file: {Error}", e.Message);
            }
        }
        _info = new ClientInfoLine(BuildInfo(newOptions, _authenticator));
        foreach (var client in _clients.Values)
        {
            // Every client reads limits and timers from its options; the trace flag is cached per client.
            client.Reload.ApplyReloadedOptions(newOptions, refreshTrace: reloadLogging || reloadTrace);
        }
        // Operator mode keeps its authenticator: accounts change through claim updates, not reloads.
        if (reloadAuth && _accounts.Operator is null)
        {
            ReloadAuthorization(newOptions);
        }
        if (reloadAuth)
        {
            // Go's reloadAuthorization ends with the accepted routes: their CONNECT is checked against the cluster block.
            Cluster?.CloseUnauthorizedRoutes();
        }
        var tick = HeartbeatInterval();
        _heartbeat?.Change(tick, tick);
        ConfigLoadTime = DateTime.UtcNow;
        _logger.LogInformation("Reloaded server configuration");
        RecheckPinnedCerts(current, newOptions);
    }

    /// <summary>
    /// Go 2.9.10's recheckPinnedCerts, run after the reload: routes whose certificate is not in a changed cluster
    /// <c>pinned_certs</c> are closed. Client-port clients are checked against the set in force before the reload (Go's
    /// code passes the current options there), so only a client admitted under an older set can fail. Gateway, leaf,
    /// websocket and MQTT sets cannot change (the reload is refused), and Go's recheck of routes against an unchanged
    /// gateway set is not copied: it would cut every route not pinned for gateways.
    /// </summary>
    private void RecheckPinnedCerts(ServerOptions current, ServerOptions newOptions)
    {
        var clients = new List<ClientConnection>();
        var oldPins = current.Tls?.PinnedCerts;
        if (!Tls.PinnedCertificates.SameSet(oldPins, newOptions.Tls?.PinnedCerts))
        {
            clients.AddRange(_clients.Values.Where(c => c.OnClientPort && !c.IsClosed
                && Tls.PinnedCertificates.Check(oldPins, c.TlsState?.PeerCertificate) is not null));
        }
        var newRoutePins = newOptions.Cluster.TlsContext?.Options.PinnedCerts;
        var routes = Cluster is { } cluster && !Tls.PinnedCertificates.SameSet(current.Cluster.TlsContext?.Options.PinnedCerts, newRoutePins)
            ? cluster.RoutesNotPinned(newRoutePins)
            : [];
        if (clients.Count + routes.Count == 0)
        {
            return;
        }
        _logger.LogInformation("Disconnect {Count} clients due to pinned certs reload", clients.Count + routes.Count);
        foreach (var client in clients)
        {
            client.CloseConnection(ClosedReason.TlsHandshakeError);
        }
        foreach (var route in routes)
        {
            route.Link.Close("TLS Handshake Failure", flush: false);
        }
    }

    /// <summary>
    /// Go's reloadAuthorization: a client whose user or nkey is gone (or moved account) is closed as
    /// "Client Closed"; every other client is authenticated again with its original CONNECT and closed
    /// with an authorization violation if that now fails; survivors get their new permissions and lose
    /// the subscriptions those no longer allow.
    /// </summary>
    private void ReloadAuthorization(ServerOptions options)
    {
        var authenticator = new OptionsAuthenticator(options, _accounts.GeneratedNoAuthUser);
        _authenticator = WithCallout(authenticator, options);
        _info = new ClientInfoLine(BuildInfo(options, _authenticator));
        // Clients the auth callout admitted keep what it granted (Go would ask the service again).
        var clients = _clients.Values.Where(c => c.ConnectReceived && !c.IsClosed && !(options.AuthCallout is { } callout && c.Reload.AdmittedByCallout(callout))).ToList();
        var remaining = new List<ClientConnection>(clients.Count);
        foreach (var client in clients)
        {
            if (client.Reload.HasMovedToDifferentAccount(options))
            {
                client.CloseConnection(ClosedReason.ClientClosed);
            }
            else
            {
                remaining.Add(client);
            }
        }
        foreach (var client in remaining)
        {
            if (!client.Reload.ReauthorizeAfterReload(authenticator, options))
            {
                continue;
            }
            client.Reload.RemoveUnauthorizedSubscriptions();
        }
    }

    /// <summary>Go's maxConnOption: closes arbitrary clients until the new limit holds.</summary>
    private void EnforceMaxConnections(int maxConnections)
    {
        var clients = _clients.Values.ToList();
        if (maxConnections <= 0 || clients.Count <= maxConnections)
        {
            return;
        }
        var toClose = clients.Count - maxConnections;
        var closed = 0;
        foreach (var client in clients.OrderBy(_ => Random.Shared.Next()))
        {
            client.Reload.CloseForMaxConnections();
            if (++closed >= toClose)
            {
                break;
            }
        }
        _logger.LogInformation("Closed {Count} connections to fall within max_connections", closed);
    }

    private void WritePidFile(string path)
    {
        try
        {
            File.WriteAllText(path, Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _logger.LogError("Failed to write pidfile: {Error}", e.Message);
        }
    }

    private void RewritePortsFile(ServerOptions options)
    {
        if (PortsFilePath is { } old)
        {
            try
            {
                File.Delete(old);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                _logger.LogError("Error cleaning up ports file {File}: {Error}", old, e.Message);
            }
            PortsFilePath = null;
        }
        if (string.IsNullOrEmpty(options.PortsFileDir))
        {
            return;
        }
        try
        {
            PortsFilePath = Configuration.PortsFile.Write(options.PortsFileDir, PortsFileExecutableName, Environment.ProcessId,
                options.Host, Port, options.HttpHost, MonitoringPort);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _logger.LogError("Error writing ports file ({Dir}): {Error}", options.PortsFileDir, e.Message);
        }
    }
}
