using Nats.Storage.File;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Durability;

/// <summary>File stores over a <see cref="CrashFileSystem"/>, with a manual clock (no timers fire).</summary>
internal static class CrashStores
{
    public const string Dir = "/crash/stream";

    public static FileStoreOptions Options(CrashFileSystem fs, int blockSize = 1024, ulong reserve = 10_000,
        FileWriteMode mode = FileWriteMode.WriteThrough, List<string>? warnings = null, int indexPageShift = 12,
        long maxIndexBytes = 8 << 20, TimeSpan? checkpointInterval = null) => new()
        {
            CheckpointInterval = checkpointInterval ?? TimeSpan.FromSeconds(1),
            IndexPageShift = indexPageShift,
            MaxIndexBytes = maxIndexBytes,
            Directory = Dir,
            FileSystem = fs,
            BlockSize = blockSize,
            SequenceReserve = reserve,
            WriteMode = mode,
            Clock = new ManualClock(),
            Warn = warnings is null ? null : w => { lock (warnings) { warnings.Add(w); } },
        };

    public static FileStore Open(FileStoreOptions options) => (FileStore)StreamStores.OpenFile(new StoreConfig { Name = "CRASH" }, options);

    public static string BlockPath(int id) => Path.Combine(Dir, "msgs", $"{id:D10}.blk");
}
