using System.Text;
using Nats.Server.JetStream;

namespace Nats.Server.Tests.JetStream;

public class PendingAcksTests
{
    private sealed class Recorder
    {
        public readonly List<List<(string Reply, ulong Seq, bool Durable)>> Batches = [];
        public readonly SemaphoreSlim Sent = new(0);

        public void Send(PendingAcks.Batch batch)
        {
            var list = new List<(string, ulong, bool)>();
            for (var i = 0; i < batch.Count; i++)
            {
                list.Add((Encoding.ASCII.GetString(batch.Reply(i)), batch.Seq(i), batch.Durable.IsCompletedSuccessfully));
            }
            lock (Batches)
            {
                Batches.Add(list);
            }
            Sent.Release();
        }
    }

    [Fact]
    public async Task AcksOfOneRoundAreSentTogetherOnlyAfterTheRoundCompletes()
    {
        var recorder = new Recorder();
        var acks = new PendingAcks(recorder.Send);
        var round = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        for (var i = 1; i <= 300; i++)
        {
            acks.Add(round.Task, Encoding.ASCII.GetBytes($"_INBOX.reply.{i}"), (ulong)i, duplicate: false);
        }
        Assert.Empty(recorder.Batches);

        round.SetResult();
        Assert.True(await recorder.Sent.WaitAsync(TimeSpan.FromSeconds(30)));
        var batch = Assert.Single(recorder.Batches);
        Assert.Equal(300, batch.Count);
        for (var i = 0; i < 300; i++)
        {
            Assert.Equal(($"_INBOX.reply.{i + 1}", (ulong)(i + 1), true), batch[i]);
        }
    }

    [Fact]
    public async Task EachRoundGetsItsOwnBatchAndAFailedRoundIsReportedAsFailed()
    {
        var recorder = new Recorder();
        var acks = new PendingAcks(recorder.Send);
        var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        acks.Add(first.Task, "a"u8, 1, duplicate: false);
        acks.Add(second.Task, "b"u8, 2, duplicate: false);
        acks.Add(second.Task, "c"u8, 3, duplicate: false);

        second.SetException(new IOException("disk gone"));
        Assert.True(await recorder.Sent.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal([("b", 2UL, false), ("c", 3UL, false)], recorder.Batches[0]);

        first.SetResult();
        Assert.True(await recorder.Sent.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal([("a", 1UL, true)], recorder.Batches[1]);

        // A publish whose round already completed is still sent (a new batch on the completed task).
        acks.Add(first.Task, "d"u8, 4, duplicate: false);
        Assert.True(await recorder.Sent.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal([("d", 4UL, true)], recorder.Batches[2]);
    }
}
