using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>Child-process side of the kill test: store, then announce. Lines end in " ." so the parent
/// can tell a whole line from one cut off by the kill.</summary>
internal static class CrashWriter
{
    /// <param name="mode">WriteThrough: announce after each call. Buffered and BufferedMessages: store a
    /// batch, flush once, then announce the batch (the pattern a stream uses to ack a socket read's publishes).</param>
    public static int Run(string dir, int blockSize, FileWriteMode mode)
    {
        using var store = StreamStores.OpenFile(new StoreConfig { Name = "CRASH" }, new FileStoreOptions
        {
            Directory = dir,
            BlockSize = blockSize,
            WriteMode = mode,
        });
        var rng = new Random();
        var stored = new List<ulong>();
        var pending = new List<string>();
        var stdout = new StreamWriter(Console.OpenStandardOutput()) { AutoFlush = true };
        var batch = 1;
        while (true)
        {
            if (stored.Count > 10 && rng.Next(10) == 0)
            {
                var victim = stored[rng.Next(stored.Count)];
                // Announced first: a removal can reach the disk before its acknowledgement is printed.
                stdout.WriteLine($"T {victim} .");
                if (store.RemoveMsg(victim))
                {
                    pending.Add($"R {victim} .");
                }
            }
            else
            {
                var token = rng.Next(1, int.MaxValue);
                var (seq, _) = store.StoreMsg($"crash.{token % 7}", default, CrashPayload(token));
                stored.Add(seq);
                pending.Add($"S {seq} {token} .");
            }
            var batched = mode is FileWriteMode.Buffered or FileWriteMode.BufferedMessages;
            if (batched && pending.Count < batch)
            {
                continue;
            }

            if (batched)
            {
                store.FlushAllPending();
                batch = rng.Next(1, 64);
            }
            foreach (var line in pending)
            {
                stdout.WriteLine(line);
            }

            pending.Clear();
        }
    }

    public static byte[] CrashPayload(int token)
    {
        var data = new byte[token % 400];
        new Random(token).NextBytes(data);
        return data;
    }
}
