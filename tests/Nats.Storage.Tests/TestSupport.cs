using System.Text;
using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>A clock tests move by hand; its timers never fire, so expiry runs only when a test asks.</summary>
internal sealed class ManualClock : TimeProvider
{
    private DateTimeOffset _now = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    public override DateTimeOffset GetUtcNow() => _now;

    public void Advance(TimeSpan by) => _now += by;

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) => new NoTimer();

    private sealed class NoTimer : ITimer
    {
        public bool Change(TimeSpan dueTime, TimeSpan period) => true;
        public void Dispose() { }
        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}

internal sealed class TempDir : IDisposable
{
    public TempDir() => Directory.CreateDirectory(Path);

    public string Path { get; } = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "nats-storage-tests", Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}

/// <summary>Creates a store of either kind, and for the file kind can reopen it on the same directory.</summary>
internal sealed class StoreHarness : IDisposable
{
    private readonly TempDir _dir = new();
    private readonly string _kind;

    public StoreHarness(string kind, StoreConfig? config = null, int blockSize = 4096, TimeProvider? clock = null)
    {
        _kind = kind;
        Config = config ?? new StoreConfig { Name = "TEST" };
        BlockSize = blockSize;
        Clock = clock;
        Store = Create();
    }

    public StoreConfig Config { get; }
    public int BlockSize { get; }
    public int MaxCachedBlocks { get; init; } = 4;

    /// <summary>File kind: log2 of the index chunk size and the resident index budget (tiny values make
    /// the store evict and rebuild index chunks constantly).</summary>
    public int IndexPageShift { get; init; } = 12;
    public long MaxIndexBytes { get; init; } = 8 << 20;

    /// <summary>File kind: write a sidecar index for each sealed block.</summary>
    public bool BlockIndexes { get; init; }
    public TimeProvider? Clock { get; }
    public IStreamStore Store { get; private set; }
    public string Directory => _dir.Path;
    public List<string> Warnings { get; } = [];
    public bool IsFile => _kind == "file";

    public IStreamStore Create() => _kind == "memory"
        ? StreamStores.CreateMemory(Config, Clock, Warn)
        : StreamStores.OpenFile(Config, Options());

    public FileStoreOptions Options() => new()
    {
        Directory = _dir.Path,
        BlockSize = BlockSize,
        MaxCachedBlocks = MaxCachedBlocks,
        IndexPageShift = IndexPageShift,
        MaxIndexBytes = MaxIndexBytes,
        BlockIndexes = BlockIndexes,
        Clock = Clock,
        Warn = Warn,
    };

    private void Warn(string line)
    {
        lock (Warnings)
        {
            Warnings.Add(line);
        }
    }

    /// <summary>The store as it is, then (file kind) the same store after a stop and reopen.</summary>
    public IEnumerable<IStreamStore> NowAndReopened()
    {
        yield return Store;
        if (IsFile)
        {
            yield return Reopen();
        }
    }

    /// <summary>File store: stops and reopens (exercising recovery). Memory store: unchanged.</summary>
    public IStreamStore Reopen()
    {
        if (!IsFile)
        {
            return Store;
        }

        Store.Stop();
        Store = Create();
        return Store;
    }

    public void Dispose()
    {
        Store.Stop();
        _dir.Dispose();
    }
}

internal static class Bytes
{
    public static byte[] Of(string s) => Encoding.UTF8.GetBytes(s);

    public static string Str(ReadOnlyMemory<byte> m) => Encoding.UTF8.GetString(m.Span);
}
