using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>Child-process side of the kill test: store, then announce. Lines end in " ." so the parent
/// can tell a whole line from one cut off by the kill.</summary>
internal static class CrashWriter
{
    public static int Run(string dir, int blockSize)
    {
        using var store = StreamStores.OpenFile(new StoreConfig { Name = "CRASH" }, new FileStoreOptions
        {
            Directory = dir,
            BlockSize = blockSize,
            WriteMode = FileWriteMode.WriteThrough,
        });
        var rng = new Random();
        var stored = new List<ulong>();
        var stdout = new StreamWriter(Console.OpenStandardOutput()) { AutoFlush = true };
        while (true)
        {
            if (stored.Count > 10 && rng.Next(10) == 0)
            {
                var victim = stored[rng.Next(stored.Count)];
                if (store.RemoveMsg(victim))
                    stdout.WriteLine($"R {victim} .");
                continue;
            }
            var token = rng.Next(1, int.MaxValue);
            var (seq, _) = store.StoreMsg($"crash.{token % 7}", default, CrashPayload(token));
            stored.Add(seq);
            stdout.WriteLine($"S {seq} {token} .");
        }
    }

    public static byte[] CrashPayload(int token)
    {
        var data = new byte[token % 400];
        new Random(token).NextBytes(data);
        return data;
    }
}
