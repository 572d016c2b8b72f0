using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Hosting;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Configuration;

namespace Nats.Server.JetStream;

/// <summary>
/// The server's JetStream (Go's jetStream for a standalone server): the store directory, the enabled
/// accounts with their streams, the API subscriptions and the transport everything publishes through.
/// </summary>
internal sealed class JetStreamService : IDisposable
{
    private readonly Dictionary<Account, JsAccount> _accounts = [];
    private readonly List<IDisposable> _apiSubscriptions = [];

    public JetStreamService(NatsServer server, JetStreamOptions options, ILogger logger)
    {
        Server = server;
        Options = options;
        Logger = logger;
        var root = string.IsNullOrEmpty(options.StoreDir) ? Path.Combine(Path.GetTempPath(), "nats") : options.StoreDir;
        StoreDirectory = Path.Combine(root, "jetstream");
        Router = new ApiRouter(this);
        Advisories = new JetStreamAdvisories(this);
        Damage = new StoreDamageReports(this);
        Resources = new ResourceLimits(this);
    }

    public NatsServer Server { get; }

    public JetStreamOptions Options { get; }

    public ILogger Logger { get; }

    /// <summary>&lt;store_dir&gt;/jetstream, as Go lays it out.</summary>
    public string StoreDirectory { get; }

    public JetStreamTransport Transport { get; private set; } = null!;

    public StreamSourcing Sourcing { get; } = new();

    public ApiRouter Router { get; }

    public JetStreamAdvisories Advisories { get; }

    /// <summary>Server and account storage limits (Go's checkAllLimits and the publish checks).</summary>
    public ResourceLimits Resources { get; }

    /// <summary>Damage found by the stores: advisories and the /jsz count.</summary>
    public StoreDamageReports Damage { get; }

    public IEnumerable<JsAccount> Accounts
    {
        get
        {
            lock (_accounts)
            {
                return [.. _accounts.Values];
            }
        }
    }

    public JsAccount? FindAccount(Account account)
    {
        lock (_accounts)
        {
            return _accounts.GetValueOrDefault(account);
        }
    }

    /// <summary>Enables the accounts, recovers their streams and subscribes to the API.</summary>
    public void Start(IEnumerable<Account> accounts, Account global)
    {
        Storage.IO.DurableDirectory.Create(StoreDirectory);
        LockStoreDirectory();
        Transport = new JetStreamTransport(Server.CreateInternalPublisher(), Server.CreateInternalPublisher());
        var all = accounts.Where(a => !a.IsSystem).ToList();
        // Go's enableJetStreamAccounts: with only $G (and $SYS) configured, $G gets JetStream;
        // otherwise the accounts with a jetstream setting do. Operator mode is never global-only.
        var globalOnly = all.All(a => a == global) && !Server.Options.Operator.Enabled;
        foreach (var account in all)
        {
            var limits = account == global && globalOnly ? JetStreamAccountLimits.Unlimited : account.Options.JetStreamLimits;
            if (limits is not null)
            {
                lock (_accounts)
                {
                    _accounts[account] = new JsAccount(this, account, limits);
                }
            }
        }
        foreach (var js in Accounts)
        {
            Recover(js);
        }
        Damage.Start();
        foreach (var account in all)
        {
            if (!ImportsTheApi(account))
            {
                SubscribeApi(account);
            }
        }
        Logger.LogInformation("Starting JetStream");
        Logger.LogInformation("  Store Directory: \"{Dir}\"", StoreDirectory);
        if (!string.IsNullOrEmpty(Options.Domain))
        {
            Logger.LogInformation("  Domain:          {Domain}", Options.Domain);
        }
        if (Server.Options.Cluster.Enabled && Server.SystemAccount is { } system)
        {
            // Go's enableJetStreamClustering: the meta group forms over the routes.
            Logger.LogInformation("Starting JetStream cluster");
            if (Server.Options.Cluster.Routes.Count == 0)
            {
                throw new Hosting.JetStreamStartException("Can't start JetStream: JetStream cluster requires configured routes or solicited leafnode for the system account");
            }
            var meta = new Cluster.MetaGroup(Server, Logger);
            meta.Start(this, StoreDirectory, system);
            Meta = meta;
        }
    }

    /// <summary>
    /// Go's enableJetStreamInfoServiceImportOnly: an account without JetStream that imports a service covering
    /// <c>$JS.API.INFO</c> (another account's API) gets no "not enabled" responder of its own to race that import.
    /// </summary>
    private bool ImportsTheApi(Account account)
    {
        lock (_accounts)
        {
            if (_accounts.ContainsKey(account))
            {
                return false;
            }
        }
        return account.SubList.Match("$JS.API.INFO"u8).Plain.Any(s => s.Receiver is ServiceImportRoute);
    }

    private void SubscribeApi(Account account)
    {
        lock (_apiSubscriptions)
        {
            _apiSubscriptions.Add(Transport!.SubscribeApi(account, "$JS.API.>", Router.OnRequest));
            if (!string.IsNullOrEmpty(Options.Domain))
            {
                _apiSubscriptions.Add(Transport.SubscribeApi(account, $"$JS.{Options.Domain}.API.>", Router.OnRequest));
            }
        }
    }

    /// <summary>
    /// Operator mode: an account fetched after start (Go's configJetStream from
    /// UpdateAccountClaims) gets the API, and JetStream when its claims enable it.
    /// </summary>
    public void AddAccount(Account account)
    {
        if (account.IsSystem)
        {
            return;
        }
        if (account.Options.JetStreamLimits is { } limits)
        {
            JsAccount js;
            lock (_accounts)
            {
                if (_accounts.ContainsKey(account))
                {
                    return;
                }
                js = new JsAccount(this, account, limits);
                _accounts[account] = js;
            }
            Recover(js);
        }
        SubscribeApi(account);
    }

    /// <summary>
    /// Go's disableJetStream (a resolver delete): the account leaves JetStream and its streams stop with
    /// their data kept; an update that enables it again recovers them.
    /// </summary>
    public void DisableAccount(Account account)
    {
        JsAccount? js;
        lock (_accounts)
        {
            if (!_accounts.Remove(account, out js))
            {
                return;
            }
        }
        foreach (var stream in js.Streams())
        {
            Sourcing.Detach(js, stream);
        }
        js.Stop();
    }

    /// <summary>An account update: new limits apply to its JetStream, which is enabled if it was not.</summary>
    public void UpdateAccount(Account account)
    {
        if (account.Options.JetStreamLimits is not { } limits)
        {
            return;
        }
        JsAccount? js;
        lock (_accounts)
        {
            if (_accounts.TryGetValue(account, out js))
            {
                js.Limits = limits;
                return;
            }
            _accounts[account] = js = new JsAccount(this, account, limits);
        }
        Recover(js);
    }

    /// <summary>The meta group when clustered (cluster {} and jetstream {}), else null.</summary>
    public Cluster.MetaGroup? Meta { get; private set; }

    /// <summary>Go's numRaftNodes (JetStreamStats <c>ha_assets</c>): the meta group and every replicated group held here.</summary>
    public int RaftGroups => Meta is { } meta ? 1 + (meta.Replicated?.GroupCount ?? 0) : 0;

    private FileStream? _lock;

    /// <summary>Takes an exclusive lock (flock, through FileShare.None) on &lt;store&gt;/jetstream/.lock for
    /// the server's lifetime; the kernel releases it when the process dies, so a kill -9 leaves no stale lock.</summary>
    private void LockStoreDirectory()
    {
        var path = Path.Combine(StoreDirectory, ".lock");
        try
        {
            _lock = new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
        }
        catch (IOException e)
        {
            throw new StoreDirectoryLockedException(
                $"Can't start JetStream: store directory \"{StoreDirectory}\" is in use by another server (lock file \"{path}\" is held)", e);
        }
    }

    private void Recover(JsAccount js)
    {
        if (!Directory.Exists(js.Directory))
        {
            return;
        }
        foreach (var directory in Directory.GetDirectories(js.Directory).Order(StringComparer.Ordinal))
        {
            try
            {
                if (StreamMetaFiles.Read(directory) is { } meta && meta.Config.Storage != StorageKind.Memory)
                {
                    js.Recover(meta);
                    var state = js.FindStream(meta.Config.Name)?.Store.State();
                    Logger.LogInformation("  Restored {Messages} messages for stream '{Account} > {Stream}'",
                        state?.Msgs ?? 0, js.Account.Name, meta.Config.Name);
                    if (state?.Lost is { Count: > 0 } lost)
                    {
                        Logger.LogWarning("  Stream '{Account} > {Stream}' lost {Lost} messages ({Bytes} bytes) to a damaged store",
                            js.Account.Name, meta.Config.Name, lost.Count, lost.Bytes);
                    }
                }
            }
            catch (Exception e) when (e is IOException or System.Text.Json.JsonException or UnauthorizedAccessException or Storage.StoreException)
            {
                Logger.LogWarning("  Error recovering stream in {Directory}: {Error}", directory, e.Message);
            }
        }
        js.AttachRecovered();
    }

    /// <summary>Server-wide figures for /jsz and $SYS JSZ (Go's JetStreamStats and usage totals).</summary>
    public JetStreamTotals Totals()
    {
        var totals = new JetStreamTotals
        {
            // Go's dynamic limits: 75% of the machine's memory, 75% of the store directory's free disk.
            MaxMemory = Options.MaxMemory >= 0 ? Options.MaxMemory : (long)(GC.GetGCMemoryInfo().TotalAvailableMemoryBytes / 4 * 3),
            MaxStore = Options.MaxStore >= 0 ? Options.MaxStore : DiskAvailable(),
        };
        foreach (var js in Accounts)
        {
            totals.Accounts++;
            totals.ApiTotal += js.ApiTotal;
            totals.ApiErrors += js.ApiErrors;
            foreach (var stream in js.Streams())
            {
                var state = stream.Store.State();
                totals.Streams++;
                totals.Consumers += stream.Consumers.Count;
                totals.Messages += state.Msgs;
                totals.Bytes += state.Bytes;
                if (state.Lost is { } lost)
                {
                    totals.LostMessages += lost.Count;
                    totals.LostBytes += lost.Bytes;
                }
                if (stream.Config.Storage == StorageKind.Memory)
                {
                    totals.Memory += state.Bytes;
                }
                else
                {
                    totals.Storage += state.Bytes;
                }
            }
        }
        return totals;
    }

    private long DiskAvailable()
    {
        try
        {
            return new DriveInfo(StoreDirectory).AvailableFreeSpace / 4 * 3;
        }
        catch (Exception e) when (e is IOException or ArgumentException or UnauthorizedAccessException)
        {
            return 1L << 40;
        }
    }

    public void Dispose()
    {
        // The meta group's loop may be mid-fsync; its log is closed before the store lock is released.
        Meta?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Meta = null;
        foreach (var subscription in _apiSubscriptions)
        {
            subscription.Dispose();
        }
        _apiSubscriptions.Clear();
        foreach (var js in Accounts)
        {
            js.Stop();
        }
        _lock?.Dispose();
        _lock = null;
    }
}

internal sealed class JetStreamTotals
{
    public long MaxMemory { get; init; }
    public long MaxStore { get; init; }
    public ulong Memory { get; set; }
    public ulong Storage { get; set; }
    public int Accounts { get; set; }
    public ulong ApiTotal { get; set; }
    public ulong ApiErrors { get; set; }
    public int Streams { get; set; }
    public int Consumers { get; set; }
    public ulong Messages { get; set; }
    public ulong Bytes { get; set; }
    public ulong LostMessages { get; set; }
    public ulong LostBytes { get; set; }
}
