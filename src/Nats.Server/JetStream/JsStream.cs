using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.JetStream.Api;
using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>
/// One stream: its config, its store and the subscriptions that capture its subjects. The publish path
/// (<see cref="StreamIngest"/>) runs on the publisher's thread under <see cref="Gate"/>.
/// </summary>
internal sealed class JsStream : IDisposable
{
    private readonly List<IDisposable> _subscriptions = [];
    private volatile StreamConfig _config;

    public JsStream(JsAccount account, StreamConfig config, GoTime created, IStreamStore store, string? directory)
    {
        Account = account;
        _config = config;
        Created = created;
        Store = store;
        Directory = directory;
        Ingest = new StreamIngest(this);
        Consumers = new Consumers.StreamConsumers(this);
    }

    public Consumers.StreamConsumers Consumers { get; }

    public JsAccount Account { get; }

    public string Name => _config.Name;

    /// <summary>The effective config; replaced as a whole by an update, never mutated.</summary>
    public StreamConfig Config => _config;

    public GoTime Created { get; }

    public IStreamStore Store { get; }

    /// <summary>The stream's directory under the store directory (file streams; null for memory streams).</summary>
    public string? Directory { get; }

    public StreamIngest Ingest { get; }

    /// <summary>The stream's RAFT group when it is replicated (set once the meta group assigns it here).</summary>
    public Cluster.StreamGroup? Group { get; set; }

    /// <summary>Serialises the publish path, purges and deletes of this stream.</summary>
    public Lock Gate { get; } = new();

    internal static StoreConfig StoreConfigOf(StreamConfig config) => new()
    {
        Name = config.Name,
        MaxMsgs = config.MaxMsgs,
        MaxBytes = config.MaxBytes,
        MaxAge = TimeSpan.FromTicks(config.MaxAge / 100),
        MaxMsgsPerSubject = config.MaxMsgsPerSubject,
        MaxMsgSize = config.MaxMsgSize,
        Discard = config.Discard,
        DiscardNewPerSubject = config.DiscardNewPerSubject,
    };

    /// <summary>
    /// Subscribes to the configured subjects so matching core publishes are stored. A replicated stream captures on its
    /// group's active leader only (Go's setLeader subscribes and unsubscribes likewise): a publish while there is no
    /// leader finds no interest, so the client hears "no responders" at once and retries, instead of waiting out its
    /// request timeout for a follower that drops it.
    /// </summary>
    public void StartCapture()
    {
        lock (_subscriptions)
        {
            if (_subscriptions.Count > 0 || (_config.Replicas > 1 && Group is not { IsActiveLeader: true }))
            {
                return;
            }
            foreach (var subject in _config.Subjects ?? [])
            {
                _subscriptions.Add(Account.Service.Transport.SubscribeIngest(Account.Account, subject, Ingest.OnMessage));
            }
        }
    }

    public void StopCapture()
    {
        lock (_subscriptions)
        {
            foreach (var subscription in _subscriptions)
            {
                subscription.Dispose();
            }
            _subscriptions.Clear();
        }
    }

    public void UpdateConfig(StreamConfig config)
    {
        lock (Gate)
        {
            var resubscribe = !(config.Subjects ?? []).SequenceEqual(_config.Subjects ?? []);
            Store.UpdateConfig(StoreConfigOf(config));
            _config = config;
            if (resubscribe)
            {
                StopCapture();
                StartCapture();
            }
        }
    }

    public StreamInfo Info(bool deletedDetails = false)
    {
        var config = _config;
        var (mirror, sources) = Account.Service.Sourcing.ExternalInfo(this);
        return new StreamInfo
        {
            Config = config,
            Created = Created,
            State = State(deletedDetails),
            Domain = string.IsNullOrEmpty(Account.Service.Options.Domain) ? null : Account.Service.Options.Domain,
            Cluster = Group?.ClusterInfo(),
            Mirror = mirror,
            Sources = sources,
        };
    }

    public ApiStreamState State(bool deletedDetails = false)
    {
        var state = Store.State();
        var result = new ApiStreamState
        {
            Messages = state.Msgs,
            Bytes = state.Bytes,
            FirstSeq = state.FirstSeq,
            LastSeq = state.LastSeq,
            FirstTime = TimeOf(state.FirstSeq, state.FirstTime, state.Msgs > 0),
            LastTime = TimeOf(state.LastSeq, state.LastTime, state.LastSeq > 0),
            NumSubjects = state.NumSubjects,
            NumDeleted = (int)state.NumDeleted,
            Consumers = Consumers.Count,
        };
        if (deletedDetails && state.NumDeleted > 0)
        {
            result.Deleted = [.. Store.DeletedSeqs()];
        }
        if (state.Lost is { } lost && lost.Count > 0)
        {
            result.Lost = new LostData { Msgs = [.. lost.Sequences], Bytes = lost.Bytes };
        }
        return result;
    }

    // The store keeps nanoseconds per message; its state times are DateTime (100 ns), so read the message for Go's exact value.
    private GoTime TimeOf(ulong seq, DateTime fallback, bool exists)
    {
        if (!exists || seq == 0)
        {
            return fallback == default ? GoTime.Zero : GoTime.FromDateTime(fallback);
        }
        var message = Store.LoadMsg(seq);
        return message is not null ? new GoTime(message.Timestamp) : GoTime.FromDateTime(fallback);
    }

    /// <summary>Go's mset.purge: everything, or by filter / below a sequence / keeping the newest.</summary>
    public ulong Purge(string filter, ulong seq, ulong keep)
    {
        lock (Gate)
        {
            var purged = filter.Length == 0 && seq == 0 && keep == 0 ? Store.Purge() : Store.PurgeEx(filter, seq, keep);
            Ingest.Reset();
            return purged;
        }
    }

    public bool RemoveMsg(ulong seq, bool erase)
    {
        lock (Gate)
        {
            var removed = erase ? Store.EraseMsg(seq) : Store.RemoveMsg(seq);
            Ingest.Reset();
            return removed;
        }
    }

    public string LogName => $"'{Account.Account.Name} > {Name}'";

    public void Dispose()
    {
        StopCapture();
        Consumers.StopAll(deleted: false);
        try
        {
            Store.Stop();
        }
        catch (Exception e)
        {
            Account.Service.Logger.LogWarning("JetStream stream {Stream} stop: {Error}", LogName, e.Message);
        }
    }

    internal static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);
}
