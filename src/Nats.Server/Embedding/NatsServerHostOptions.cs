using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;

namespace Nats.Server.Embedding;

/// <summary>
/// What an embedded server starts with. With nothing set it listens on 127.0.0.1 on a port the
/// operating system picks, which is what a test fixture wants.
/// </summary>
public sealed class NatsServerHostOptions
{
    /// <summary>
    /// Server options to start from instead of the defaults (e.g. built in code); a <see cref="ConfigFile"/>
    /// is read onto them, and the properties below apply on top. The object is not copied: do not reuse it
    /// for another server.
    /// </summary>
    public ServerOptions? Options { get; set; }

    /// <summary>
    /// A nats-server configuration file, read first (as <c>nats-server -c</c> would). The properties below
    /// that are set are applied on top of it, like command-line flags over a file.
    /// </summary>
    public string? ConfigFile { get; set; }

    /// <summary>Client listen address; null: the file's, or 127.0.0.1 without a file.</summary>
    public string? Host { get; set; }

    /// <summary>Client port; 0 picks a free port (read it back from <see cref="NatsServerHost.Port"/>); null: the file's, or 0 without a file.</summary>
    public int? Port { get; set; }

    /// <summary>Serve the HTTP monitoring endpoints (/varz, /connz, /healthz, /metrics...) on a free port unless the file sets one.</summary>
    public bool EnableMonitoring { get; set; }

    /// <summary>
    /// Enable JetStream. Without <see cref="JetStreamStoreDirectory"/> (and no store_dir from the file) the
    /// host stores it in a new temporary directory of its own, deleted when the host stops: what a test
    /// fixture wants.
    /// </summary>
    public bool EnableJetStream { get; set; }

    /// <summary>Where JetStream keeps its streams (store_dir); null: the file's, or a temporary directory when <see cref="EnableJetStream"/>.</summary>
    public string? JetStreamStoreDirectory { get; set; }

    /// <summary>Server name in INFO and monitoring; null: the file's, or the server id.</summary>
    public string? ServerName { get; set; }

    /// <summary>Last word on every setting (authorization, accounts, limits...), applied after the file and the properties above.</summary>
    public Action<ServerOptions>? Configure { get; set; }

    /// <summary>Where the server logs; null: the logger factory of the DI container with AddNatsServer, otherwise nothing.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>Builds the server options: file, then properties, then <see cref="Configure"/>; invalid settings throw <see cref="ConfigurationException"/>.</summary>
    /// <param name="temporaryStoreDir">The temporary JetStream directory this call created (the host deletes it at stop), or null.</param>
    internal ServerOptions BuildServerOptions(out string? temporaryStoreDir)
    {
        temporaryStoreDir = null;
        var options = Options ?? new ServerOptions();
        if (ConfigFile is { } file)
        {
            var result = ConfigLoader.Load(options, file);
            if (result.Errors.Count > 0)
            {
                throw new ConfigurationException(result.Errors, result.Warnings);
            }
        }
        else if (Options is null)
        {
            options.Host = "127.0.0.1";
            options.Port = 0;
        }
        if (Host is { } host)
        {
            options.Host = host;
        }
        if (Port is { } port)
        {
            options.Port = port;
        }
        if (ServerName is { } name)
        {
            options.ServerName = name;
        }
        if (EnableMonitoring && options.HttpPort == 0)
        {
            options.HttpPort = -1;
        }
        if (EnableJetStream)
        {
            options.JetStream.Enabled = true;
        }
        if (JetStreamStoreDirectory is { } storeDir)
        {
            options.JetStream.StoreDir = storeDir;
        }
        else if (options.JetStream.Enabled && options.JetStream.StoreDir.Length == 0)
        {
            temporaryStoreDir = Directory.CreateTempSubdirectory("nats-embedded-js-").FullName;
            options.JetStream.StoreDir = temporaryStoreDir;
        }
        Configure?.Invoke(options);
        if (ServerOptionsValidation.Validate(options) is { } invalid)
        {
            throw new ConfigurationException(invalid);
        }
        return options;
    }
}
