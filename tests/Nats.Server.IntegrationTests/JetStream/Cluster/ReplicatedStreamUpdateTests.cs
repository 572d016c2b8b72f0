using System.Collections.Concurrent;
using System.Text.Json;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// STREAM.UPDATE through the meta group on three of our servers while a NATS.Net client publishes: a config change
/// seen by every replica, R1 to R3 (the new replicas catch up with what the stream held) and R3 back to R1 (the
/// leader kept); afterwards every acknowledged message is in the stream exactly once at its sequence, on every replica.
/// Go's update errors for a refused change are compared with Go 2.9.10.
/// </summary>
public class ReplicatedStreamUpdateTests(ITestOutputHelper output)
{
    [Fact]
    public async Task ReplicasGrowAndShrinkWhilePublishingWithEveryAckedMessageOnEveryReplica()
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec());
        try
        {
            await RunAsync(cluster);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    private static async Task RunAsync(TestCluster cluster)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(240));
        var all = cluster.Servers.ToList();
        await using var admin = new NatsConnection(ReplicatedStreamTests.App(all[0]));
        var js = new NatsJSContext(admin);
        var created = await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("UPD", ["upd.>"]) { NumReplicas = 1 }, cts.Token);
        Assert.Equal(1, created.Info.Config.NumReplicas);

        await using var publisherConnection = new NatsConnection(ReplicatedStreamTests.App(all[1]));
        var publisher = new SequentialPublisher(new NatsJSContext(publisherConnection));
        var publishing = publisher.RunAsync(cts.Token);
        await publisher.WaitForAsync(40, cts.Token);

        // A config change: every replica (one here) takes it; the answer is Go's update response.
        var described = await js.UpdateStreamAsync(new StreamConfig("UPD", ["upd.>"]) { NumReplicas = 1, Description = "one" }, cts.Token);
        Assert.Equal("one", described.Info.Config.Description);

        // R1 -> R3 while publishing: the answer names three members, and the new replicas catch up.
        var grown = await js.UpdateStreamAsync(new StreamConfig("UPD", ["upd.>"]) { NumReplicas = 3, Description = "three" }, cts.Token);
        Assert.Equal(3, grown.Info.Config.NumReplicas);
        Assert.NotNull(grown.Info.Cluster);
        await publisher.WaitForAsync(publisher.Acked.Count + 40, cts.Token);
        await publisher.PauseAsync();
        var states = await ReplicatedStreamAdminTests.ReplicaStatesAgreeAsync(cluster, "UPD", publisher.Acked.Count, cts.Token);
        Assert.Equal((ulong)publisher.Acked.Count, states[0].LastSeq);
        var info = await js.GetStreamAsync("UPD", cancellationToken: cts.Token);
        Assert.Equal("three", info.Info.Config.Description);
        Assert.Equal(2, info.Info.Cluster!.Replicas!.Count);
        var leader = info.Info.Cluster.Leader;
        publisher.Resume();
        await publisher.WaitForAsync(publisher.Acked.Count + 20, cts.Token);

        // R3 -> R1 while publishing: the leader keeps the stream, the others drop theirs.
        var shrunk = await js.UpdateStreamAsync(new StreamConfig("UPD", ["upd.>"]) { NumReplicas = 1, Description = "one again" }, cts.Token);
        Assert.Equal(1, shrunk.Info.Config.NumReplicas);
        await publisher.WaitForAsync(publisher.Acked.Count + 40, cts.Token);
        await publisher.StopAsync();
        await publishing;
        var kept = await ReplicatedStreamAdminTests.ReplicaStatesAgreeAsync(cluster, "UPD", publisher.Acked.Count, cts.Token, replicas: 1);
        Assert.Equal(leader, kept[0].Server);
        Assert.Equal(((ulong)publisher.Acked.Count, 1UL), (kept[0].LastSeq, kept[0].FirstSeq));

        // Every acknowledged message once, at its sequence.
        foreach (var (seq, data) in publisher.Acked)
        {
            var got = await admin.RequestAsync<string, string>("$JS.API.STREAM.MSG.GET.UPD", $$"""{"seq":{{seq}}}""", cancellationToken: cts.Token);
            using var doc = JsonDocument.Parse(got.Data!);
            var payload = Convert.FromBase64String(doc.RootElement.GetProperty("message").GetProperty("data").GetString()!);
            Assert.Equal(data, System.Text.Encoding.UTF8.GetString(payload));
        }
        Assert.Equal(publisher.Acked.Count, publisher.Acked.Select(a => a.Seq).Distinct().Count());
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task RefusedUpdatesAnswerAsGo(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
            await using var nc = new NatsConnection(ReplicatedStreamTests.App(cluster[0]));
            var js = new NatsJSContext(nc);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("REF", ["ref.>"]) { NumReplicas = 3 }, cts.Token);
            await ReplicatedStreamTests.CreateWhenMetaReadyAsync(js, new StreamConfig("OTHER", ["other.>"]) { NumReplicas = 1 }, cts.Token);
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_update_response","error":{"code":500,"err_code":10052,"description":"stream configuration update can not change storage type"}}""",
                await ReplicatedStreamAdminTests.RequestAsync(nc, "$JS.API.STREAM.UPDATE.REF", """{"name":"REF","subjects":["ref.>"],"num_replicas":3,"storage":"memory"}""", cts.Token));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_update_response","error":{"code":400,"err_code":10065,"description":"subjects overlap with an existing stream"}}""",
                await ReplicatedStreamAdminTests.RequestAsync(nc, "$JS.API.STREAM.UPDATE.REF", """{"name":"REF","subjects":["ref.>","other.x"],"num_replicas":3}""", cts.Token));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_update_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}""",
                await ReplicatedStreamAdminTests.RequestAsync(nc, "$JS.API.STREAM.UPDATE.NONE", """{"name":"NONE","subjects":["none.>"]}""", cts.Token));
            Assert.Equal(
                """{"type":"io.nats.jetstream.api.v1.stream_update_response","error":{"code":400,"err_code":10056,"description":"stream name in subject does not match request"}}""",
                await ReplicatedStreamAdminTests.RequestAsync(nc, "$JS.API.STREAM.UPDATE.REF", """{"name":"OTHER","subjects":["other.>"]}""", cts.Token));
            // A change that is allowed: every replica takes it, the leader answers with the cluster block.
            var updated = await js.UpdateStreamAsync(new StreamConfig("REF", ["ref.>", "ref2.>"]) { NumReplicas = 3, MaxMsgs = 10 }, cts.Token);
            Assert.Equal(10, updated.Info.Config.MaxMsgs);
            Assert.Equal(2, updated.Info.Cluster!.Replicas!.Count);
            await ReplicatedStreamTests.PublishUntilAckedAsync(js, "ref2.x", "x", cts.Token);
        }
        catch
        {
            output.WriteLine(cluster.Logs());
            throw;
        }
    }

    /// <summary>One publish at a time, each retried with the same message id until acknowledged; every ack recorded.</summary>
    private sealed class SequentialPublisher(NatsJSContext js)
    {
        private volatile bool _paused;
        private volatile bool _stopped;
        private TaskCompletionSource _idle = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public ConcurrentQueue<(ulong Seq, string Data)> Acked { get; } = new();

        private Task _run = Task.CompletedTask;

        public Task RunAsync(CancellationToken token) => _run = RunCoreAsync(token);

        private async Task RunCoreAsync(CancellationToken token)
        {
            await Task.Yield();
            var i = 0;
            while (!_stopped)
            {
                if (_paused)
                {
                    _idle.TrySetResult();
                    await Task.Delay(50, token);
                    continue;
                }
                var data = $"u{++i}";
                Acked.Enqueue((await PublishAsync(data, token), data));
            }
            _idle.TrySetResult();
        }

        /// <summary>Retried with the same id until answered; a duplicate answer names the stored original, which counts.</summary>
        private async Task<ulong> PublishAsync(string data, CancellationToken token)
        {
            while (true)
            {
                try
                {
                    var ack = await js.PublishAsync("upd.x", data, opts: new NatsJSPubOpts { MsgId = data }, cancellationToken: token);
                    if (ack.Error is { } error)
                    {
                        throw new InvalidOperationException($"publish {data} refused: {error.Code} {error.Description}");
                    }
                    return ack.Seq;
                }
                catch (NatsJSPublishNoResponseException)
                {
                }
                catch (NatsNoRespondersException)
                {
                }
                catch (NatsException e) when (e.InnerException is TimeoutException || e is NatsJSTimeoutException)
                {
                }
                catch (TimeoutException)
                {
                }
            }
        }

        public async Task WaitForAsync(int count, CancellationToken token)
        {
            while (Acked.Count < count)
            {
                if (_run.IsFaulted)
                {
                    // The publisher got an error answer: surface it rather than waiting for the timeout.
                    await _run;
                }
                await Task.Delay(20, token);
            }
        }

        public Task PauseAsync()
        {
            _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _paused = true;
            return _idle.Task;
        }

        public void Resume() => _paused = false;

        public Task StopAsync()
        {
            _stopped = true;
            _paused = false;
            return Task.CompletedTask;
        }
    }
}
