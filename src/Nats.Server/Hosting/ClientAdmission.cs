using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Transport;

namespace Nats.Server.Hosting;

/// <summary>
/// The one door a client connection comes in by, whatever carries it: plain TCP or TLS from the accept
/// loop, a WebSocket from its listener, the embedded host's in-process pipe, each as its own
/// <see cref="ClientTransport"/>, and MQTT connections from the MQTT port or the websocket /mqtt path
/// (<see cref="AdmitMqtt"/>: Go's createMQTTClient, the same steps without INFO). It gives the connection its id, counts it, applies
/// max_connections, joins it to $G (CONNECT may move it), renders its INFO (with a nonce when the
/// authenticator needs one) and starts its loops. Go does the same in createClient.
/// </summary>
internal sealed class ClientAdmission
{
    private readonly NatsServer _server;
    private readonly AccountRegistry _accounts;
    private readonly ConcurrentDictionary<ulong, ClientConnection> _clients;
    private readonly ConcurrentDictionary<ulong, Task> _clientTasks;
    private readonly ILogger _clientLogger;

    public ClientAdmission(NatsServer server, AccountRegistry accounts, ConcurrentDictionary<ulong, ClientConnection> clients,
        ConcurrentDictionary<ulong, Task> clientTasks, ILoggerFactory loggerFactory)
    {
        _server = server;
        _accounts = accounts;
        _clients = clients;
        _clientTasks = clientTasks;
        _clientLogger = loggerFactory.CreateLogger("nats-server.client");
    }

    /// <summary>Admits a connection over <paramref name="transport"/> and runs it until it ends (tracked for shutdown).</summary>
    public ClientConnection Admit(ClientTransport transport)
    {
        var id = _server.NextClientId();
        transport.OnAdmitted(id);
        _server.CountConnection();
        var client = new ClientConnection(_server, transport, id, _accounts.Global, _clientLogger);
        var options = _server.Options;
        var overLimit = options.MaxConnections > 0 && _server.ConnectionCountForLimit >= options.MaxConnections;
        if (!overLimit)
        {
            // Like Go's createClient, every connection starts in $G until CONNECT binds its own account.
            _accounts.Global.TryAddClient();
            _clients[id] = client;
            _server.SystemEvents?.ClientJoinedAccount(_accounts.Global);
        }
        _clientLogger.LogDebug("{Client} - Client connection created", client);
        client.Nonce = _server.AuthenticatorFor(transport).NonceRequired ? NonceGenerator.Create() : null;
        var info = _server.RenderInfo(transport, id, client.RemoteIp, client.Nonce);
        var task = Task.Run(() => client.RunAsync(info, overLimit));
        _clientTasks[id] = task;
        task.ContinueWith(_ => _clientTasks.TryRemove(id, out Task? _), TaskScheduler.Default);
        if (_server.IsShuttingDown)
        {
            client.CloseConnection(ClosedReason.ServerShutdown);
        }
        return client;
    }

    /// <summary>
    /// Admits an MQTT connection over <paramref name="transport"/>: the same id sequence, totals and
    /// max_connections as a client (Go keeps both in one map); over the limit or during shutdown it is
    /// closed before a byte is read. Tracked for shutdown like a client.
    /// </summary>
    public Mqtt.MqttConnection AdmitMqtt(ClientTransport transport, Mqtt.MqttServer mqtt)
    {
        var id = _server.NextClientId();
        transport.OnAdmitted(id);
        _server.CountConnection();
        var connection = new Mqtt.MqttConnection(mqtt, _server, transport, id, mqtt.ConnectionLogger);
        var options = _server.Options;
        var overLimit = options.MaxConnections > 0 && _server.ConnectionCountForLimit >= options.MaxConnections;
        ClosedReason? refused = overLimit ? ClosedReason.MaxConnectionsExceeded : _server.IsShuttingDown ? ClosedReason.ServerShutdown : null;
        mqtt.Register(connection);
        var task = Task.Run(() => connection.RunAsync(refused));
        _clientTasks[id] = task;
        task.ContinueWith(_ => _clientTasks.TryRemove(id, out Task? _), TaskScheduler.Default);
        return connection;
    }
}
