using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Configuration;
using Nats.Storage;
using Nats.Storage.File;
using Nats.Subjects;

namespace Nats.Server.JetStream;

/// <summary>An account's JetStream (Go's jsAccount): its limits, streams and API counters.</summary>
internal sealed class JsAccount
{
    private readonly Dictionary<string, JsStream> _streams = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();
    private long _apiTotal;
    private long _apiErrors;

    public JsAccount(JetStreamService service, Account account, JetStreamAccountLimits limits)
    {
        Service = service;
        Account = account;
        _limits = limits;
        Directory = Path.Combine(service.StoreDirectory, account.Name, "streams");
    }

    public JetStreamService Service { get; }

    public Account Account { get; }

    /// <summary>Replaced as a whole when an operator-mode account update changes them.</summary>
    public JetStreamAccountLimits Limits
    {
        get => Volatile.Read(ref _limits);
        set => Volatile.Write(ref _limits, value);
    }

    private JetStreamAccountLimits _limits;

    public string Directory { get; }

    public ulong ApiTotal => (ulong)Interlocked.Read(ref _apiTotal);

    public ulong ApiErrors => (ulong)Interlocked.Read(ref _apiErrors);

    public void CountApi(bool error)
    {
        Interlocked.Increment(ref _apiTotal);
        if (error)
        {
            Interlocked.Increment(ref _apiErrors);
        }
    }

    public JsStream? FindStream(string name)
    {
        lock (_lock)
        {
            return _streams.GetValueOrDefault(name);
        }
    }

    /// <summary>Streams sorted by name (Go sorts names and lists).</summary>
    public List<JsStream> Streams()
    {
        lock (_lock)
        {
            return [.. _streams.Values.OrderBy(s => s.Name, StringComparer.Ordinal)];
        }
    }

    public int ConsumerCount(JsStream stream) => stream.Consumers.Count;

    /// <summary>A message was stored in <paramref name="stream"/>: feeds streams that source or mirror it and wakes its consumers.</summary>
    public void OnStored(JsStream stream, string subject, ulong seq)
    {
        Service.Sourcing.OnStored(this, stream, subject, seq);
        stream.Consumers.OnStored(subject, seq);
    }

    /// <summary>Go's addStream: returns the stream and whether it was created. Replicas above 1 only in a cluster,
    /// where the stream is one member's replica.</summary>
    public (JsStream Stream, bool Created) AddStream(StreamConfig request, bool clustered = false)
    {
        var cfg = StreamConfigValidator.Check(request, this, Service.Options);
        if (cfg.Replicas > 1 && !clustered)
        {
            throw new JsApiException(JsErrors.StreamReplicasNotSupported);
        }
        // Outside the account lock: the server-wide part reads every account's streams. An existing
        // stream of that name answers first (same config: itself; otherwise "name in use"), as Go.
        if (FindStream(cfg.Name) is null)
        {
            Service.Resources.CheckStream(this, cfg, null);
        }
        lock (_lock)
        {
            if (_streams.TryGetValue(cfg.Name, out var existing))
            {
                if (existing.Config.SameAs(cfg))
                {
                    return (existing, false);
                }
                throw new JsApiException(JsErrors.StreamNameExist);
            }
            if (Limits.MaxStreams > 0 && _streams.Count >= Limits.MaxStreams)
            {
                throw new JsApiException(JsErrors.MaximumStreamsLimit);
            }
            if (SubjectsOverlap(cfg.Subjects, null))
            {
                throw new JsApiException(JsErrors.StreamSubjectOverlap);
            }
            var created = GoTime.Now();
            var stream = Open(cfg, created, persistMeta: true);
            _streams[cfg.Name] = stream;
            stream.StartCapture();
            Service.Sourcing.Attach(this, stream);
            return (stream, true);
        }
    }

    /// <summary>Opens a stream recovered from its directory at start.</summary>
    public void Recover(StreamMetaFile meta)
    {
        var cfg = meta.Config;
        lock (_lock)
        {
            var stream = Open(cfg, meta.Created, persistMeta: false);
            _streams[cfg.Name] = stream;
            stream.StartCapture();
            stream.Consumers.Recover();
        }
    }

    /// <summary>Attaches sources and mirrors once every recovered stream is open.</summary>
    public void AttachRecovered()
    {
        foreach (var stream in Streams())
        {
            Service.Sourcing.Attach(this, stream);
        }
    }

    public bool SubjectsOverlap(IEnumerable<string>? subjects, JsStream? self)
    {
        lock (_lock)
        {
            foreach (var other in _streams.Values)
            {
                if (other == self)
                {
                    continue;
                }
                foreach (var a in subjects ?? [])
                {
                    foreach (var b in other.Config.Subjects ?? [])
                    {
                        if (SubjectRules.Collide(a, b))
                        {
                            return true;
                        }
                    }
                }
            }
            return false;
        }
    }

    public void DeleteStream(JsStream stream)
    {
        lock (_lock)
        {
            _streams.Remove(stream.Name);
        }
        Service.Sourcing.Detach(this, stream);
        stream.StopCapture();
        stream.Consumers.StopAll(deleted: true);
        lock (stream.Gate)
        {
            stream.Store.Delete();
        }
        if (stream.Directory is { } directory && System.IO.Directory.Exists(directory))
        {
            System.IO.Directory.Delete(directory, recursive: true);
            StreamMetaFiles.SyncDirectory(Directory);
        }
    }

    public void PersistConfig(JsStream stream)
    {
        if (stream.Directory is { } directory)
        {
            StreamMetaFiles.Write(directory, new StreamMetaFile { Created = stream.Created, Config = stream.Config });
        }
    }

    public void Stop()
    {
        foreach (var stream in Streams())
        {
            Service.Sourcing.DetachExternal(stream);
            stream.Dispose();
        }
    }

    public (ulong Memory, ulong Storage) Usage()
    {
        ulong memory = 0, storage = 0;
        foreach (var stream in Streams())
        {
            var bytes = stream.Store.State().Bytes;
            if (stream.Config.Storage == StorageKind.Memory)
            {
                memory += bytes;
            }
            else
            {
                storage += bytes;
            }
        }
        return (memory, storage);
    }

    /// <summary>How often a file stream's sealed blocks are re-read and verified.</summary>
    internal static readonly TimeSpan ScrubInterval = TimeSpan.FromHours(6);

    private JsStream Open(StreamConfig cfg, GoTime created, bool persistMeta)
    {
        var storeConfig = JsStream.StoreConfigOf(cfg);
        var directory = Path.Combine(Directory, cfg.Name);
        // Every stream keeps its meta.inf on disk (also memory streams: Go forgets them at restart, so do we,
        // by not recovering them, but the directory layout stays uniform).
        if (cfg.Storage == StorageKind.Memory)
        {
            var memory = StreamStores.CreateMemory(storeConfig, warn: text => Service.Logger.LogWarning("{Text}", text));
            return new JsStream(this, cfg, created, memory, null);
        }
        if (persistMeta)
        {
            StreamMetaFiles.Write(directory, new StreamMetaFile { Created = created, Config = cfg });
        }
        var options = new FileStoreOptions
        {
            Directory = Path.Combine(directory, StreamMetaFiles.MessagesDir),
            SyncMode = Service.Options.SyncAlways ? FileSyncMode.Always
                : Service.Options.SyncInterval is not null ? FileSyncMode.Interval
                : FileSyncMode.GroupCommit,
            // Go 2.10 (whose key this is) takes 0 as its default interval, 2 minutes.
            SyncInterval = Service.Options.SyncInterval is { } interval && interval > TimeSpan.Zero ? interval : TimeSpan.FromMinutes(2),
            // A read batch of publishes is one write: StreamIngest flushes before any ack it sends
            // without waiting for a group commit round (which writes before it syncs).
            WriteMode = FileWriteMode.BufferedMessages,
            // Go's filestore warnings read "Filestore [<stream>] <text>".
            Warn = text => Service.Logger.LogWarning("Filestore [{Stream}] {Text}", cfg.Name, text),
            Damaged = damage => Service.Damage.Report(this, cfg.Name, damage),
            Failed = text => Service.Damage.ReportFailure(this, cfg.Name, text),
            // Bit rot in sealed blocks nobody reads is found by a background re-read (outside the store
            // lock), often enough to matter, rarely enough that a large store's reads stay cheap.
            ScrubInterval = ScrubInterval,
            ResumeAtLastStored = cfg.Replicas > 1,
        };
        var store = StreamStores.OpenFile(storeConfig, options);
        return new JsStream(this, cfg, created, store, directory);
    }
}
