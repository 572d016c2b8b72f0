using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Mqtt;

/// <summary>
/// The MQTT listener and the server-wide MQTT state: sessions by client id (with Go's takeover and
/// one-second flapping jail), retained messages per account and the QoS 1 redelivery tick.
/// </summary>
internal sealed class MqttServer : IAsyncDisposable
{
    private static readonly TimeSpan FlapperJail = TimeSpan.FromSeconds(1);

    private readonly NatsServer _server;
    private readonly ILogger _logger;
    private readonly ILogger _connectionLogger;
    private readonly CancellationTokenSource _shutdown = new();
    private readonly ConcurrentDictionary<ulong, MqttConnection> _connections = new();
    private readonly Dictionary<string, MqttSession> _sessions = new(StringComparer.Ordinal);
    private readonly Dictionary<string, long> _flappers = new(StringComparer.Ordinal);
    private readonly Lock _sessionsLock = new();
    private readonly ConcurrentDictionary<string, MqttRetainedStore> _retained = new(StringComparer.Ordinal);
    private Socket? _listener;
    private Task? _acceptLoop;

    public MqttServer(NatsServer server, ILoggerFactory loggerFactory)
    {
        _server = server;
        _logger = loggerFactory.CreateLogger("nats-server.mqtt");
        _connectionLogger = loggerFactory.CreateLogger("nats-server.mqtt.client");
        Options = server.Options.Mqtt;
        JetStream = new MqttJetStream(server, _logger);
    }

    public MqttOptions Options { get; }

    /// <summary>The MQTT streams and consumers in JetStream.</summary>
    public MqttJetStream JetStream { get; }

    public int Port { get; private set; }

    public bool AuthRequired => Options.AuthOverride || _server.AuthRequired;

    public IEnumerable<MqttConnection> Connections => _connections.Values;

    public int ConnectionCount => _connections.Count;

    public static string NewClientId() => Guid.NewGuid().ToString("N")[..22];

    public void Start()
    {
        RestorePersistedState();
        var address = Options.Host is "" or "0.0.0.0" ? IPAddress.Any : Options.Host is "::" ? IPAddress.IPv6Any
            : IPAddress.TryParse(Options.Host, out var parsed) ? parsed : Dns.GetHostAddresses(Options.Host)[0];
        var listener = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        // A taken port is fatal, as in Go (see ListenerSocket).
        Transport.ListenerSocket.AllowRebindOverTimeWait(listener);
        var port = Options.Port < 0 ? 0 : Options.Port;
        try
        {
            listener.Bind(new IPEndPoint(address, port));
            listener.Listen(1024);
        }
        catch (SocketException e)
        {
            listener.Dispose();
            throw new ListenFailedException($"Unable to listen for MQTT connections: {ListenFailedException.ListenError(Options.Host, port, e)}", e);
        }
        catch
        {
            listener.Dispose();
            throw;
        }
        _listener = listener;
        Port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        _logger.LogInformation("Listening for MQTT clients on {Scheme}://{Host}:{Port}", Options.TlsContext is null ? "mqtt" : "tls", Options.Host, Port);
        _acceptLoop = Task.Run(() => AcceptLoop.RunAsync(listener, Accept, () => false, _logger, _shutdown.Token));
    }

    /// <summary>The logger MQTT connections write to (Go's client lines, with "mid").</summary>
    public ILogger ConnectionLogger => _connectionLogger;

    public async ValueTask DisposeAsync()
    {
        _shutdown.Cancel();
        _listener?.Close();
        if (_acceptLoop is not null)
        {
            await _acceptLoop.ConfigureAwait(false);
        }
        // The admission door tracks the connections' tasks; the server's shutdown waits for them with the clients'.
        foreach (var connection in _connections.Values)
        {
            connection.Close(ClosedReason.ServerShutdown);
        }
    }

    public MqttRetainedStore Retained(Account account) => _retained.GetOrAdd(account.Name, _ => new MqttRetainedStore());

    /// <summary>
    /// Go's MQTT authentication: an MQTT username or token replaces the server's users for MQTT
    /// clients; otherwise the server's authentication runs with the MQTT username and password
    /// (the password doubles as token), with the MQTT no_auth_user for clients without credentials.
    /// </summary>
    public AuthenticatedUser? Authenticate(MqttConnect connect, string remoteIp, string connectionType)
    {
        if (Options.AuthOverride)
        {
            if (!string.IsNullOrEmpty(Options.Token))
            {
                return OptionsAuthenticator.ComparePasswords(Options.Token, connect.Password) ? new AuthenticatedUser(AuthMethod.Token, null, null, null) : null;
            }
            return connect.Username == Options.Username && OptionsAuthenticator.ComparePasswords(Options.Password ?? "", connect.Password)
                ? new AuthenticatedUser(AuthMethod.UserPassword, Options.Username, null, null)
                : null;
        }
        var username = connect.Username;
        var password = connect.Password;
        if (string.IsNullOrEmpty(username) && string.IsNullOrEmpty(password) && !string.IsNullOrEmpty(Options.NoAuthUser)
            && _server.Options.Users?.FirstOrDefault(u => u.Username == Options.NoAuthUser) is { } fallback)
        {
            username = fallback.Username;
            password = fallback.Password;
        }
        var request = new ClientAuthRequest(new ConnectOptions { User = username, Pass = password, AuthToken = password, Jwt = password },
            null, remoteIp, connectionType);
        return _server.Authenticator.Authenticate(request);
    }

    /// <summary>
    /// Finds or creates the client id's session and binds <paramref name="connection"/> to it, closing a
    /// connection that held it (takeover). Returns whether CONNACK reports a present session.
    /// </summary>
    public (MqttSession Session, bool Present) BindSession(MqttConnection connection, MqttConnect connect, AuthenticatedUser user)
    {
        var account = _server.FindAccount(user.Account) ?? _server.GlobalAccount;
        var key = account.Name + " " + connect.ClientId;
        MqttConnection? replaced = null;
        MqttSession session;
        bool present;
        bool jailed;
        var wasPersistent = false;
        lock (_sessionsLock)
        {
            jailed = _flappers.TryGetValue(key, out var since) && Environment.TickCount64 - since < FlapperJail.TotalMilliseconds;
            if (!jailed)
            {
                _flappers.Remove(key);
            }
        }
        if (jailed)
        {
            // Go holds a client that flaps between applications for a second, then closes it; the
            // connection waits that out asynchronously (MqttFlappingException), no thread is held.
            throw new MqttFlappingException(connect.ClientId, FlapperJail);
        }
        lock (_sessionsLock)
        {
            if (_sessions.TryGetValue(key, out var existing))
            {
                session = existing;
                replaced = existing.Connection;
                present = !connect.CleanSession && !existing.Clean;
                if (!present)
                {
                    existing.Clear();
                }
                wasPersistent = !existing.Clean;
                if (replaced is not null)
                {
                    _flappers[key] = Environment.TickCount64;
                }
            }
            else
            {
                var nats = InternalClient.CreateStallable(_server, connection.Id, account, _connectionLogger);
                session = new MqttSession(connect.ClientId, account, nats, Options, JetStream, SharedConsumerInUse);
                _sessions[key] = session;
                // Go's createOrRestoreSession: a session stored in $MQTT_sess (by us or by Go) comes back.
                present = false;
                if (JetStream.LoadSession(account, session.IdHash) is { } record)
                {
                    session.Restore(record);
                    present = !connect.CleanSession;
                    if (connect.CleanSession)
                    {
                        session.Clear();
                        wasPersistent = true;
                    }
                }
            }
            session.Clean = connect.EndsWithConnection;
            session.ExpiryInterval = connect.IsV5 && connect.SessionExpiry != uint.MaxValue ? connect.SessionExpiry : null;
            session.ExpiresAt = null;
            // A delayed will is not sent once the client is back [MQTT-3.1.3-9].
            session.PendingWill = null;
        }
        if (replaced is not null)
        {
            _logger.LogWarning("{Connection} - Replacing old client {Old} since both have the same client ID {Id}", connection, replaced, connect.ClientId);
            session.Detach(replaced);
            replaced.CloseReplaced();
        }
        if (!session.Clean || wasPersistent)
        {
            SaveSession(session);
        }
        return (session, present);
    }

    /// <summary>
    /// MQTT 5: a session left without its connection ends <paramref name="expiry"/> seconds later (never for
    /// 0xFFFFFFFF) unless a client takes it up again; its will goes out after the will delay or when the session
    /// ends. Both are recorded in the session's record, so that a restart meanwhile keeps them (RestoreExpiringSessions).
    /// </summary>
    public void ScheduleExpiry(MqttSession session, uint expiry, MqttWill? will)
    {
        var generation = session.Generation;
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        if (will is not null)
        {
            var delay = Math.Min(will.Delay, expiry);
            session.PendingWill = new MqttPersistedWill
            {
                Subject = will.Subject,
                Topic = will.Topic,
                Message = will.Message,
                Qos = will.Qos,
                Retain = will.Retain,
                Lines = will.Lines.Length == 0 ? null : will.Lines,
                Due = now + delay * 1000L,
            };
            SendWillAfter(session, generation, TimeSpan.FromSeconds(delay));
        }
        if (expiry == uint.MaxValue)
        {
            session.ExpiryInterval = null;
            if (will is not null)
            {
                SaveSession(session);
            }
            return;
        }
        session.ExpiresAt = now + expiry * 1000L;
        SaveSession(session);
        EndAfter(session, generation, TimeSpan.FromSeconds(expiry));
    }

    private void SendWillAfter(MqttSession session, int generation, TimeSpan delay) =>
        _ = Task.Delay(delay, _shutdown.Token).ContinueWith(t =>
        {
            if (!t.IsCanceled)
            {
                SendPendingWill(session, generation);
            }
        }, TaskScheduler.Default);

    /// <summary>The delayed will goes out, once, unless a client took the session up since <paramref name="generation"/>;
    /// its record is written again without it.</summary>
    private void SendPendingWill(MqttSession session, int generation)
    {
        MqttPersistedWill? will;
        lock (_sessionsLock)
        {
            if (session.Generation != generation || session.Connection is not null)
            {
                return;
            }
            will = session.TakePendingWill();
        }
        if (will is null)
        {
            return;
        }
        try
        {
            var live = new MqttLivePublisher(JetStream);
            var subject = Encoding.UTF8.GetBytes(will.Subject);
            if (will.Retain)
            {
                lock (Retained(session.Account).Gate)
                {
                    SetRetained(session.Account, will.Subject, will.Topic, will.Message, will.Qos, will.Lines);
                    live.Publish(session, subject, will.Message, will.Qos, will.Retain, will.Lines, default);
                }
            }
            else
            {
                live.Publish(session, subject, will.Message, will.Qos, will.Retain, will.Lines, default);
            }
            session.FlushPublished();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            _logger.LogError("MQTT: unable to publish the will of client {Id}: {Error}", session.ClientId, e.Message);
        }
        SaveSession(session);
    }

    /// <summary>Ends the detached <paramref name="session"/> after <paramref name="delay"/> unless a client attached since
    /// <paramref name="generation"/>; a will still waiting goes out first.</summary>
    private void EndAfter(MqttSession session, int generation, TimeSpan delay)
    {
        _ = Task.Delay(delay, _shutdown.Token).ContinueWith(t =>
        {
            if (t.IsCanceled)
            {
                return;
            }
            SendPendingWill(session, generation);
            lock (_sessionsLock)
            {
                if (session.Generation != generation || session.Connection is not null)
                {
                    return;
                }
                session.Clean = true;
            }
            session.Clear();
            SaveSession(session);
            RemoveSession(session);
        }, TaskScheduler.Default);
    }

    /// <summary>Writes (or, for a clean session, deletes) the session's record in $MQTT_sess.</summary>
    public void SaveSession(MqttSession session)
    {
        if (session.Clean)
        {
            JetStream.DeleteSession(session.Account, session.IdHash);
        }
        else
        {
            JetStream.SaveSession(session.Account, session.IdHash, session.ToRecord());
        }
    }

    public void SetRetained(Account account, string subject, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, ReadOnlySpan<byte> lines = default)
    {
        Retained(account).Set(subject, topic, payload, qos, lines);
        JetStream.SaveRetained(account, subject, topic, payload, qos, lines);
    }

    /// <summary>Retained messages are read when the server starts (as Go loads them); sessions when their client connects.</summary>
    private void RestorePersistedState()
    {
        foreach (var account in _server.Accounts)
        {
            if (_server.JetStream?.FindAccount(account) is null)
            {
                continue;
            }
            var retained = JetStream.LoadRetained(account);
            foreach (var record in retained)
            {
                Retained(account).Set(record.Subject!, Encoding.UTF8.GetBytes(record.Topic ?? ""), record.Message ?? [], record.Qos, record.Lines);
            }
            if (retained.Count > 0)
            {
                _logger.LogInformation("MQTT: restored {Retained} retained messages of account {Account}", retained.Count, account.Name);
            }
            RestoreExpiringSessions(account);
        }
    }

    /// <summary>
    /// MQTT 5 sessions that can expire or hold a delayed will are loaded at start (others wait for their client, as in
    /// Go) so that each still ends, and its will goes out, on time (at once when overdue): a session detached before
    /// the stop keeps its recorded deadline; one whose connection the stop cut gets its expiry interval from now,
    /// written back so that another restart does not extend it again.
    /// </summary>
    private void RestoreExpiringSessions(Account account)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var restored = 0;
        foreach (var (_, record) in JetStream.LoadSessions(account))
        {
            if (record.Clean || record.Id is null || (record.ExpiresAt is null && record.ExpiryInterval is null && record.Will is null))
            {
                continue;
            }
            var session = new MqttSession(record.Id, account, InternalClient.CreateStallable(_server, _server.NextClientId(), account, _connectionLogger),
                Options, JetStream, SharedConsumerInUse);
            session.Restore(record);
            if (session.ExpiresAt is null && session.ExpiryInterval is { } interval)
            {
                session.ExpiresAt = now + interval * 1000L;
                SaveSession(session);
            }
            lock (_sessionsLock)
            {
                _sessions[account.Name + " " + record.Id] = session;
            }
            if (session.PendingWill is { } will)
            {
                SendWillAfter(session, session.Generation, TimeSpan.FromMilliseconds(Math.Max(0, will.Due - now)));
            }
            if (session.ExpiresAt is { } expires)
            {
                EndAfter(session, session.Generation, TimeSpan.FromMilliseconds(Math.Max(0, expires - now)));
            }
            restored++;
        }
        if (restored > 0)
        {
            _logger.LogInformation("MQTT: {Sessions} expiring sessions of account {Account} restored", restored, account.Name);
        }
    }

    /// <summary>
    /// Whether a session other than <paramref name="except"/> holds the shared subscription consumer
    /// <paramref name="durable"/>: a session in memory by its filters, any other by its record in <c>$MQTT_sess</c>.
    /// </summary>
    private bool SharedConsumerInUse(MqttSession except, string durable)
    {
        List<MqttSession> loaded;
        lock (_sessionsLock)
        {
            loaded = [.. _sessions.Values.Where(s => s.Account == except.Account)];
        }
        // Read outside the sessions lock: each session's filters are guarded by its own lock.
        if (loaded.Any(s => s != except && s.Filters.HoldsConsumer(durable)))
        {
            return true;
        }
        var inMemory = loaded.Select(s => s.IdHash).ToHashSet(StringComparer.Ordinal);
        return JetStream.LoadSessions(except.Account)
            .Any(r => !inMemory.Contains(r.IdHash) && r.Record.Cons?.Values.Any(c => c.Durable == durable) == true);
    }

    public void RemoveSession(MqttSession session)
    {
        lock (_sessionsLock)
        {
            var key = session.Account.Name + " " + session.ClientId;
            if (_sessions.TryGetValue(key, out var current) && current == session && session.Connection is null)
            {
                _sessions.Remove(key);
            }
        }
    }

    public void OnClosed(MqttConnection connection)
    {
        _connections.TryRemove(connection.Id, out _);
        _server.OnMqttClosed(connection);
    }

    /// <summary>A socket of the MQTT port: TLS first when the block has tls {} (Go's createMQTTClient), then the one admission door.</summary>
    private void Accept(Socket socket) =>
        _server.AdmitMqtt(Options.TlsContext is { } tls
            ? new Transport.TlsTransport(socket, tls, _connectionLogger, allowNonTls: false, tlsFirst: true, idLabel: "mid")
            : new Transport.SocketTransport(socket), this);

    /// <summary>Admission took the connection in: it counts for /connz, the heartbeat and max_connections.</summary>
    public void Register(MqttConnection connection) => _connections[connection.Id] = connection;

    /// <summary>The server heartbeat's MQTT side: each connection's timers (see <see cref="MqttConnection.OnHeartbeat"/>).</summary>
    public void OnHeartbeat(long now)
    {
        foreach (var connection in _connections.Values)
        {
            connection.OnHeartbeat(now);
        }
    }
}
