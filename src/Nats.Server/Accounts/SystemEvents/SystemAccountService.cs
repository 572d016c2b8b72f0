using System.Buffers;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Nats.Server.Clients;
using Nats.Server.Hosting;
using Nats.Server.Monitoring;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// The system account's machinery (Go's events.go): an internal client holding the $SYS handler
/// subscriptions, and one loop that serialises everything the server sends, so the "seq" of the
/// server block grows in send order. Producers (client threads, timers) only post work; handlers run
/// and publish on the loop. Partial files: requests (SystemAccountService.Requests) and events
/// (SystemAccountService.Events).
/// </summary>
internal sealed partial class SystemAccountService : IAsyncDisposable
{
    // Go's eventsHBInterval: the statsz ceiling and the account connections heartbeat.
    internal static readonly TimeSpan EventsHeartbeat = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan FirstStatsz = TimeSpan.FromMilliseconds(250);

    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    private readonly NatsServer _server;
    private readonly ServerDocuments _documents;
    private readonly ILogger _logger;
    private readonly Channel<Action> _work = Channel.CreateUnbounded<Action>(new UnboundedChannelOptions { SingleReader = true });
    private readonly ArrayBufferWriter<byte> _buffer = new(4096);
    private readonly EventIds _eventIds = new();
    private readonly Dictionary<Account, Timer> _connsHeartbeats = [];
    private ClientConnection? _client;
    private Delivery.InternalPublisher? _publisher;
    private Task? _loop;
    private Timer? _statszTimer;
    private Timer? _sweepTimer;
    private RemoteServers? _remote;
    private TimeSpan _statszInterval = FirstStatsz;
    private long _seq;
    private int _sid = 1;
    private int _stopped;

    public SystemAccountService(NatsServer server, Account account, ServerDocuments documents, ILogger logger)
    {
        _server = server;
        Account = account;
        _documents = documents;
        _logger = logger;
        ServerHash = Hash(server.ServerName);
    }

    public Account Account { get; }

    /// <summary>Go's getHash(server name): 8 base-62 characters naming this server in inbox and latency subjects.</summary>
    public string ServerHash { get; }

    /// <summary>The internal client (null before <see cref="Start"/>).</summary>
    internal ClientConnection? Client => _client;

    private bool Running => Volatile.Read(ref _stopped) == 0 && _client is not null;

    /// <summary>Creates the internal client and its subscriptions, and starts the send loop and the statsz timer.</summary>
    public void Start(ulong clientId)
    {
        _client = InternalClient.Create(_server, clientId, Account, _server.LoggerFactory.CreateLogger("nats-server.system"));
        // Publishes as the server under the internal client's id (Go's one SYSTEM client: cid 1, clients from 2).
        _publisher = new Delivery.InternalPublisher(new Delivery.MessageOrigin(_server, clientId));
        var remote = new RemoteServers(_server, _logger, () => PublishStatsz($"$SYS.SERVER.{_server.ServerId}.STATSZ"), Post);
        _remote = remote;
        SubscribeAll();
        RegisterSystemImports();
        _loop = Task.Run(RunLoopAsync);
        _statszTimer = new Timer(_ => Post(StatszTick), null, FirstStatsz, Timeout.InfiniteTimeSpan);
        _sweepTimer = new Timer(_ => Post(remote.Sweep), null, RemoteServers.SweepEvery, RemoteServers.SweepEvery);
    }

    /// <summary>Sends the shutdown event, waits until it is handed to the subscribers, and stops the loop.</summary>
    public async Task ShutdownAsync()
    {
        if (_client is null || Interlocked.Exchange(ref _stopped, 1) == 1)
        {
            return;
        }
        _statszTimer?.Dispose();
        _sweepTimer?.Dispose();
        var sent = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _work.Writer.TryWrite(() =>
        {
            try
            {
                PublishShutdown();
                foreach (var timer in _connsHeartbeats.Values)
                {
                    timer.Dispose();
                }
                _connsHeartbeats.Clear();
            }
            finally
            {
                sent.TrySetResult();
            }
        });
        _work.Writer.TryComplete();
        try
        {
            await sent.Task.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
            if (_loop is not null)
            {
                await _loop.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
            }
        }
        catch (TimeoutException)
        {
            // A stuck handler must not hold up the server's shutdown.
            _logger.LogWarning("System account: the event loop did not finish within 5s of shutdown");
        }
    }

    public ValueTask DisposeAsync() => new(ShutdownAsync());

    /// <summary>Queues work for the loop; ignored once shutdown began (like Go clearing sendq).</summary>
    private void Post(Action work)
    {
        if (Volatile.Read(ref _stopped) == 0)
        {
            _work.Writer.TryWrite(work);
        }
    }

    private async Task RunLoopAsync()
    {
        var reader = _work.Reader;
        while (await reader.WaitToReadAsync().ConfigureAwait(false))
        {
            while (reader.TryRead(out var work))
            {
                try
                {
                    work();
                }
                catch (Exception ex)
                {
                    _logger.LogError(ex, "System account: internal event failed");
                }
            }
        }
    }

    /// <summary>Serialises a message body and publishes it into <paramref name="account"/> (the system account by default).</summary>
    private void Publish(string subject, string reply, Action<Utf8JsonWriter> write, Account? account = null)
    {
        _buffer.ResetWrittenCount();
        using (var json = new Utf8JsonWriter(_buffer, WriterOptions))
        {
            write(json);
        }
        PublishRaw(subject, reply, _buffer.WrittenSpan, account);
    }

    /// <summary>Into the system account as Go's internal sender writes it, or (another account) as a reply that came back through a service import.</summary>
    private void PublishRaw(string subject, string reply, ReadOnlySpan<byte> payload, Account? account = null)
    {
        var publisher = _publisher!;
        var target = account ?? Account;
        Span<byte> subjectBytes = stackalloc byte[Encoding.UTF8.GetMaxByteCount(subject.Length)];
        subjectBytes = subjectBytes[..Encoding.UTF8.GetBytes(subject, subjectBytes)];
        var replyBytes = Encoding.UTF8.GetBytes(reply);
        publisher.Publish(target, subjectBytes, replyBytes, default, payload, replySet: ReferenceEquals(target, Account));
    }

    /// <summary>The "server" object of every event and reply (Go's ServerInfo, filled in by the send loop).</summary>
    private void WriteServerInfo(Utf8JsonWriter json, string? propertyName = "server")
    {
        if (propertyName is null)
        {
            json.WriteStartObject();
        }
        else
        {
            json.WriteStartObject(propertyName);
        }
        json.WriteString("name", _server.ServerName);
        json.WriteString("host", _server.Options.Host);
        json.WriteString("id", _server.ServerId);
        if (ClusterName is { Length: > 0 } cluster)
        {
            json.WriteString("cluster", cluster);
        }
        json.WriteString("ver", NatsServer.FeatureLevelVersion);
        json.WriteNumber("seq", ++_seq);
        json.WriteBoolean("jetstream", _server.JetStream is not null);
        json.WriteString("time", GoFormat.Time(DateTime.UtcNow));
        json.WriteEndObject();
    }

    /// <summary>Go's info.Cluster: the cluster's name, or the gateway's when gateways are on (it is the cluster's name there too).</summary>
    private string? ClusterName => _server.EventClusterName;

    private void PublishShutdown() =>
        Publish($"$SYS.SERVER.{_server.ServerId}.SHUTDOWN", "", json => WriteServerInfo(json, null));

    /// <summary>Statsz on the first timer tick after 250 ms, then doubling up to 30 s, as Go's startStatszTimer.</summary>
    private void StatszTick()
    {
        var subject = $"$SYS.SERVER.{_server.ServerId}.STATSZ";
        // Building the document samples the process and walks the clients: skipped when nobody listens.
        if (HasListeners(subject))
        {
            PublishStatsz(subject);
        }
        if (_statszInterval < EventsHeartbeat)
        {
            _statszInterval = _statszInterval * 2 > EventsHeartbeat ? EventsHeartbeat : _statszInterval * 2;
        }
        if (Running)
        {
            try
            {
                _statszTimer?.Change(_statszInterval, Timeout.InfiniteTimeSpan);
            }
            catch (ObjectDisposedException)
            {
                // Shutdown disposed the timer meanwhile.
            }
        }
    }

    /// <summary>Go's getHash(name): see <see cref="NameHash"/>.</summary>
    internal static string Hash(string name) => NameHash.Of(name);
}
