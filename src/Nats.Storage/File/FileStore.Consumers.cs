using Nats.Storage.Consumers;

namespace Nats.Storage.File;

internal sealed partial class FileStore
{
    // Consumers live beside the message blocks, as Go's obs/<name>, so deleting or snapshotting the
    // stream's directory covers them.
    private string ConsumersDirectory => Path.Combine(_opts.Directory, "obs");

    /// <summary>Blocks holding a buffer: whole content or a write buffer (for tests of the read path).</summary>
    internal int CachedBlocks
    {
        get
        {
            lock (Sync)
            {
                return _blocks.Count(b => b.HoldsBuffer);
            }
        }
    }

    /// <summary>Bytes of the buffers the blocks hold (for tests of the write buffer).</summary>
    internal long BufferBytes
    {
        get
        {
            lock (Sync)
            {
                return _blocks.Sum(b => (long)b.BufferLength);
            }
        }
    }

    /// <summary>Some read window holds a buffer (for tests of the read path).</summary>
    internal bool ReadWindowsHeld
    {
        get
        {
            lock (Sync)
            {
                return _windows.Held;
            }
        }
    }

    protected override ConsumerStoreBase OpenConsumer(string name, ConsumerStoreConfig? config)
        => new FileConsumerStore(name, Path.Combine(ConsumersDirectory, name), config, _opts.FileSystem, _opts.ConsumerLogCompactBytes);

    protected override IEnumerable<string> PersistedConsumers()
        => System.IO.Directory.Exists(ConsumersDirectory)
            ? System.IO.Directory.GetDirectories(ConsumersDirectory).Select(Path.GetFileName).OfType<string>()
            : [];
}
