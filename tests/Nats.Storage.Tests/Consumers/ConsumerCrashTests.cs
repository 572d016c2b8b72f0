using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests.Consumers;

/// <summary>
/// Power loss on the simulated disk (<see cref="CrashFileSystem"/>: unsynced pages kept, lost or torn,
/// unsynced directory changes partly applied) at random points of a consumer's life, including in the
/// middle of a store call and of a log compaction. After every recovery the consumer's state must be
/// exactly the state after all acknowledged updates plus some prefix of the ones still in flight
/// (updates are logged in the order they were applied, so no other state is possible).
/// </summary>
public sealed class ConsumerCrashTests
{
    private static readonly ConsumerStoreConfig Config = new() { AckPolicy = AckPolicy.Explicit, MaxDeliver = 4 };

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void AcknowledgedUpdatesSurvivePowerLoss(int seed)
    {
        var rng = new Random(seed);
        var fs = new CrashFileSystem();
        var options = CrashStores.Options(fs) with { ConsumerLogCompactBytes = 1024 };
        var stream = CrashStores.Open(options);
        var consumer = stream.ConsumerStore("C", Config);
        var model = NewModel(new ConsumerState());
        ulong dseq = 0, sseq = 0;
        var compacted = 0;
        for (var round = 0; round < 150; round++)
        {
            for (var i = rng.Next(1, 40); i > 0; i--)
            {
                Step(rng, consumer, model, ref dseq, ref sseq).Wait();
            }
            var candidates = new List<ConsumerState> { model.State() };
            if (rng.Next(3) == 0)
            {
                fs.FreezeAfter(rng.Next(0, 8)); // the power fails inside one of the next calls
            }

            for (var i = rng.Next(0, 6); i > 0; i--)
            {
                try
                {
                    _ = Step(rng, consumer, model, ref dseq, ref sseq); // in flight: not waited for
                }
                catch (IOException)
                {
                    candidates.Add(model.State()); // applied, maybe partly persisted
                    break;
                }
                candidates.Add(model.State());
            }
            if (fs.ListFiles("/crash/stream/obs/C", ".dat").Count > 0)
            {
                compacted++;
            }

            fs.Crash(rng);

            stream = CrashStores.Open(options);
            consumer = stream.ConsumerStore("C");
            Assert.Equal(Config, consumer.Config with { Metadata = Config.Metadata });
            var recovered = consumer.State();
            Assert.True(candidates.Any(c => Same(c, recovered)),
                $"round {round}: recovered state {Describe(recovered)} is none of {string.Join(" | ", candidates.Select(Describe))}");
            model = NewModel(recovered);
            dseq = Math.Max(recovered.Delivered.Consumer, dseq);
            sseq = Math.Max(recovered.Delivered.Stream, sseq);
        }
        Assert.True(compacted > 10, "the log was rarely compacted; the test would not cover snapshots");
    }

    private static IConsumerStore NewModel(ConsumerState state)
    {
        var model = StreamStores.CreateMemory(new StoreConfig { Name = "M" }).ConsumerStore("C", Config);
        model.Update(state);
        return model;
    }

    /// <summary>One random update, applied to the store and to the model (the model first, so a call the
    /// power failure interrupts is still counted as possibly persisted).</summary>
    private static DurabilityTicket Step(Random rng, IConsumerStore store, IConsumerStore model, ref ulong dseq, ref ulong sseq)
    {
        var pending = model.State().Pending;
        var roll = rng.Next(10);
        if (roll < 5 || pending.Count == 0)
        {
            dseq++;
            sseq += (ulong)rng.Next(1, 3);
            var ts = 1_700_000_000_000_000_000 + (long)dseq * 1_000_003;
            model.UpdateDelivered(dseq, sseq, 1, ts);
            return store.UpdateDelivered(dseq, sseq, 1, ts);
        }
        var keys = pending.Keys.Order().ToArray();
        var s = keys[rng.Next(keys.Length)];
        if (roll < 7)
        {
            dseq++;
            var dc = model.State().Redelivered.GetValueOrDefault(s) + 2;
            model.UpdateDelivered(dseq, s, dc, (long)dseq);
            return store.UpdateDelivered(dseq, s, dc, (long)dseq);
        }
        model.UpdateAcks(pending[s].Sequence, s);
        return store.UpdateAcks(pending[s].Sequence, s);
    }

    private static bool Same(ConsumerState a, ConsumerState b)
        => a.Delivered == b.Delivered && a.AckFloor == b.AckFloor
           && a.Pending.Count == b.Pending.Count && a.Pending.All(p => b.Pending.TryGetValue(p.Key, out var q) && q == p.Value)
           && a.Redelivered.Count == b.Redelivered.Count && a.Redelivered.All(p => b.Redelivered.TryGetValue(p.Key, out var q) && q == p.Value);

    private static string Describe(ConsumerState s)
        => $"delivered {s.Delivered} floor {s.AckFloor} pending {s.Pending.Count} redelivered {s.Redelivered.Count}";
}
