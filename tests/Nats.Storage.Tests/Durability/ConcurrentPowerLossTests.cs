using System.Collections.Concurrent;
using Nats.Storage.File;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Durability;

/// <summary>Group commit under concurrency: many writers share sync rounds while the power fails at a
/// random file operation; whatever any writer saw acknowledged survives, intact and unduplicated.</summary>
public sealed class ConcurrentPowerLossTests
{
    [Theory]
    [InlineData(nameof(FileWriteMode.WriteThrough))]
    [InlineData(nameof(FileWriteMode.Buffered))]
    [InlineData(nameof(FileWriteMode.BufferedMessages))]
    public async Task AcknowledgedAppendsOfConcurrentWritersSurvive(string modeName)
    {
        var mode = Enum.Parse<FileWriteMode>(modeName);
        for (var seed = 0; seed < 12; seed++)
        {
            var rng = new Random(seed);
            var fs = new CrashFileSystem();
            var options = CrashStores.Options(fs, blockSize: 2048, reserve: (ulong)rng.Next(8, 64), mode: mode);
            var store = CrashStores.Open(options);
            var acked = new ConcurrentDictionary<ulong, byte[]>();
            var handedOut = new ConcurrentBag<ulong>();
            fs.FreezeAfter(rng.Next(20, 400));
            var writers = Enumerable.Range(0, 8).Select(w => Task.Run(async () =>
            {
                for (var i = 0; i < 200; i++)
                {
                    var data = BitConverter.GetBytes(w * 1000 + i);
                    StoreResult r;
                    try
                    {
                        r = store.StoreMsg($"w.{w}", default, data);
                        handedOut.Add(r.Seq);
                        await r.Durable;
                    }
                    catch (Exception) when (fs.Frozen)
                    {
                        return;
                    }
                    Assert.True(acked.TryAdd(r.Seq, data), $"sequence {r.Seq} handed out twice");
                }
            })).ToArray();
            await Task.WhenAll(writers);

            fs.Crash(rng);
            var recovered = CrashStores.Open(options);
            foreach (var (seq, data) in acked)
            {
                Assert.Equal(data, recovered.LoadMsg(seq)?.Data.ToArray());
            }

            var max = handedOut.IsEmpty ? 0 : handedOut.Max();
            Assert.True(recovered.StoreMsg("after", default, [1]).Seq > max, $"seed {seed}: a sequence was reused");
            recovered.Stop();
        }
    }
}
