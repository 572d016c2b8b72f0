using Nats.Storage.File;
using Nats.Storage.Memory;

namespace Nats.Storage;

/// <summary>Creates stores; the engines themselves stay internal so only the contract is public.</summary>
internal static class StreamStores
{
    public static IStreamStore CreateMemory(StoreConfig config, TimeProvider? clock = null, Action<string>? warn = null)
        => new MemoryStore(config, clock, warn);

    /// <summary>Opens (recovering if needed) or creates a file store in <see cref="FileStoreOptions.Directory"/>.</summary>
    public static IStreamStore OpenFile(StoreConfig config, FileStoreOptions options)
        => new FileStore(config, options);
}
