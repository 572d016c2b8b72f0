using System.Security.Cryptography;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.KeyValueStore;
using NATS.Client.ObjectStore;

namespace Nats.Server.IntegrationTests.JetStream.Cluster;

/// <summary>
/// NATS.Net 3.3.2 Key-Value and Object Store with <c>replicas: 3</c> on three servers (ours, and Go 2.9.10 as the
/// reference for what the clients expect), the client on the stream's leader: create, put, get (direct get), update
/// with revision, create-only, delete, purge, history, keys, watch; then, after kill -9 of the leader, every
/// acknowledged revision is still read back through another server.
/// </summary>
public class ReplicatedKeyValueTests
{
    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task R3KeyValueWorksOnTheLeaderAndKeepsEveryAcknowledgedRevisionAfterTheLeaderDies(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
        var token = cts.Token;
        var all = cluster.Servers;
        await using (var admin = new NatsConnection(ReplicatedStreamTests.App(all[0])))
        {
            await CreateWhenMetaReadyAsync(() => new NatsKVContext(new NatsJSContext(admin)).CreateStoreAsync(
                new NatsKVConfig("cfg") { History = 5, NumberOfReplicas = 3, Storage = NatsKVStorageType.File }, token), token);
        }
        var leader = await StreamLeaderAsync(cluster, "KV_cfg", token);
        await using var nc = new NatsConnection(ReplicatedStreamTests.App(leader));
        var store = await new NatsKVContext(new NatsJSContext(nc)).GetStoreAsync("cfg", token);

        var r1 = await store.PutAsync("color", "red", cancellationToken: token);
        var r2 = await store.PutAsync("color", "blue", cancellationToken: token);
        Assert.Equal(r1 + 1, r2);
        var entry = await store.GetEntryAsync<string>("color", cancellationToken: token);
        Assert.Equal(("blue", r2), (entry.Value, entry.Revision));
        Assert.Equal("red", (await store.GetEntryAsync<string>("color", revision: r1, cancellationToken: token)).Value);

        var r3 = await store.UpdateAsync("color", "green", r2, cancellationToken: token);
        await Assert.ThrowsAsync<NatsKVWrongLastRevisionException>(async () => await store.UpdateAsync("color", "black", r2, cancellationToken: token));
        await store.CreateAsync("size", "L", cancellationToken: token);
        await Assert.ThrowsAsync<NatsKVCreateException>(async () => await store.CreateAsync("size", "M", cancellationToken: token));

        var history = new List<string?>();
        await foreach (var h in store.HistoryAsync<string>("color", cancellationToken: token))
        {
            history.Add(h.Value);
        }
        Assert.Equal(["red", "blue", "green"], history);
        Assert.Equal(r3, (await store.GetEntryAsync<string>("color", cancellationToken: token)).Revision);

        var keys = new List<string>();
        await foreach (var key in store.GetKeysAsync(cancellationToken: token))
        {
            keys.Add(key);
        }
        Assert.Equal(["color", "size"], keys.Order());

        await store.DeleteAsync("size", cancellationToken: token);
        await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await store.GetEntryAsync<string>("size", cancellationToken: token));
        await store.PutAsync("gone", "x", cancellationToken: token);
        await store.PurgeAsync("gone", cancellationToken: token);
        await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await store.GetEntryAsync<string>("gone", cancellationToken: token));

        using (var watchCts = CancellationTokenSource.CreateLinkedTokenSource(token))
        {
            var watched = new List<string>();
            var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var watch = Task.Run(async () =>
            {
                await foreach (var e in store.WatchAsync<string>("w.*", opts: new NatsKVWatchOpts { OnNoData = _ => { ready.TrySetResult(); return ValueTask.FromResult(false); } }, cancellationToken: watchCts.Token))
                {
                    ready.TrySetResult();
                    if (e.Operation == NatsKVOperation.Put)
                    {
                        watched.Add($"{e.Key}={e.Value}");
                    }
                    if (watched.Count == 2)
                    {
                        return;
                    }
                }
            }, watchCts.Token);
            await ready.Task.WaitAsync(token);
            await store.PutAsync("w.a", "1", cancellationToken: token);
            await store.PutAsync("w.b", "2", cancellationToken: token);
            await watch.WaitAsync(token);
            Assert.Equal(["w.a=1", "w.b=2"], watched);
        }

        // Acknowledged revisions, then the leader is killed: another server answers with each of them.
        var acked = new Dictionary<string, (string Value, ulong Revision)>();
        for (var i = 0; i < 50; i++)
        {
            var key = $"k{i % 10}";
            var value = $"v{i}";
            acked[key] = (value, await store.PutAsync(key, value, cancellationToken: token));
        }
        await leader.KillAsync();
        var survivor = all.First(s => s != leader);
        await using var after = new NatsConnection(ReplicatedStreamTests.App(survivor));
        var afterStore = await RetryAsync(() => new NatsKVContext(new NatsJSContext(after)).GetStoreAsync("cfg", token), token);
        foreach (var (key, (value, revision)) in acked)
        {
            var got = await RetryAsync(() => afterStore.GetEntryAsync<string>(key, cancellationToken: token), token);
            Assert.Equal((value, revision), (got.Value, got.Revision));
        }
        var next = await RetryAsync(() => afterStore.PutAsync("k0", "after", cancellationToken: token), token);
        Assert.True(next > acked.Values.Max(a => a.Revision));
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task R3KeyValueThroughNatsGoOnTheLeader(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
        await using (var admin = new NatsConnection(ReplicatedStreamTests.App(cluster.Servers[0])))
        {
            await CreateWhenMetaReadyAsync(() => new NatsKVContext(new NatsJSContext(admin)).CreateStoreAsync(
                new NatsKVConfig("gokv") { History = 5, NumberOfReplicas = 3, Storage = NatsKVStorageType.File }, cts.Token), cts.Token);
        }
        var leader = await StreamLeaderAsync(cluster, "KV_gokv", cts.Token);
        var psi = new System.Diagnostics.ProcessStartInfo(await Clients.NatsGoProgram.BuildAsync("kvclient"))
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var arg in new[] { leader.Url, "app", "pass", "gokv" })
        {
            psi.ArgumentList.Add(arg);
        }
        using var program = System.Diagnostics.Process.Start(psi)!;
        var output = program.StandardOutput.ReadToEndAsync(cts.Token);
        var errors = program.StandardError.ReadToEndAsync(cts.Token);
        try
        {
            await program.WaitForExitAsync(cts.Token);
        }
        finally
        {
            if (!program.HasExited)
            {
                program.Kill();
            }
        }
        Assert.True(program.ExitCode == 0, $"kvclient: {await errors}{await output}\n{cluster.Logs()}");
        Assert.Contains("PASS", await output);
        if (kind == "ours")
        {
            // Go 2.9.10 may answer a read right after a write from a replica that has not applied it (kvclient retries
            // those); ours answers direct gets from the leader, so every read sees the client's own writes.
            Assert.Contains("stale reads: 0", await output);
        }
    }

    [Theory]
    [InlineData("ours")]
    [InlineData("go")]
    public async Task R3ObjectStorePutGetListDeleteOnTheLeader(string kind)
    {
        await using var cluster = await TestCluster.StartAsync(ReplicatedStreamTests.Spec(kind, kind, kind));
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(180));
        var token = cts.Token;
        await using (var admin = new NatsConnection(ReplicatedStreamTests.App(cluster.Servers[0])))
        {
            await CreateWhenMetaReadyAsync(() => new NatsObjContext(new NatsJSContext(admin)).CreateObjectStoreAsync(
                new NatsObjConfig("files") { NumberOfReplicas = 3, Storage = NatsObjStorageType.File }, token), token);
        }
        var leader = await StreamLeaderAsync(cluster, "OBJ_files", token);
        await using var nc = new NatsConnection(ReplicatedStreamTests.App(leader) with { RequestTimeout = TimeSpan.FromSeconds(20) });
        var store = await new NatsObjContext(new NatsJSContext(nc)).GetObjectStoreAsync("files", token);

        var data = RandomNumberGenerator.GetBytes(700_000);
        var info = await store.PutAsync("blob", data, token);
        Assert.Equal(data.Length, (int)info.Size);
        Assert.True(info.Chunks > 1);
        Assert.Equal(data, await store.GetBytesAsync("blob", token));
        await store.PutAsync("small", [1, 2, 3], token);
        var names = new List<string>();
        await foreach (var item in store.ListAsync(cancellationToken: token))
        {
            names.Add(item.Name);
        }
        Assert.Equal(["blob", "small"], names.Order());
        await store.DeleteAsync("blob", token);
        await Assert.ThrowsAsync<NatsObjNotFoundException>(async () => await store.GetBytesAsync("blob", token));
        Assert.Equal([1, 2, 3], await store.GetBytesAsync("small", token));
    }

    /// <summary>A bucket create, retried while the meta group has no leader yet (nobody answers, or Go's "no suitable peers").</summary>
    private static async Task CreateWhenMetaReadyAsync<T>(Func<ValueTask<T>> create, CancellationToken token)
    {
        while (true)
        {
            try
            {
                await create();
                return;
            }
            catch (NatsJSApiException e) when (e.Error.ErrCode is 10005 or 10008)
            {
            }
            catch (NatsException e) when (e is NatsNoRespondersException or NatsJSApiNoResponseException or NatsJSTimeoutException || e.InnerException is TimeoutException)
            {
            }
            await Task.Delay(200, token);
        }
    }

    /// <summary>Retried while the group elects a new leader (requests go unanswered meanwhile).</summary>
    private static async Task<T> RetryAsync<T>(Func<ValueTask<T>> call, CancellationToken token)
    {
        while (true)
        {
            token.ThrowIfCancellationRequested();
            try
            {
                return await call();
            }
            catch (NatsException e) when (e is NatsNoRespondersException or NatsJSApiNoResponseException or NatsJSTimeoutException or NatsJSPublishNoResponseException
                || e.InnerException is TimeoutException)
            {
            }
            catch (TimeoutException)
            {
            }
            await Task.Delay(100, token);
        }
    }

    private static async Task<ClusterServer> StreamLeaderAsync(TestCluster cluster, string stream, CancellationToken token)
    {
        while (true)
        {
            foreach (var server in cluster.Servers.Where(s => s.IsRunning))
            {
                try
                {
                    await using var nc = new NatsConnection(ReplicatedStreamTests.App(server) with { RequestTimeout = TimeSpan.FromSeconds(2) });
                    var info = await new NatsJSContext(nc).GetStreamAsync(stream, cancellationToken: token);
                    if (info.Info.Cluster?.Leader is { Length: > 0 } name && cluster.Servers.FirstOrDefault(s => s.Name == name) is { } leader)
                    {
                        return leader;
                    }
                }
                catch (NatsException)
                {
                }
            }
            await Task.Delay(100, token);
        }
    }
}
