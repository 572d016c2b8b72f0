using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.KeyValueStore;
using NATS.Client.ObjectStore;
using NATS.Client.ObjectStore.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>NATS.Net 3.3.2's Object Store links and watch, and Key-Value watch of deletes and TTL buckets, against our server.</summary>
public sealed class NatsNetObjectStoreTests
{
    private static readonly TimeSpan Long = TimeSpan.FromSeconds(30);

    private static async Task<(ITestServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync(bool go = false)
    {
        var server = go ? await TestServers.StartGoAsync(new ServerSettings { JetStream = true }) : await TestServers.StartOursAsync(new ServerSettings { JetStream = true });
        var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await connection.ConnectAsync();
        return (server, connection, new NatsJSContext(connection));
    }

    [Fact]
    public async Task LinksToObjectsAndBucketsResolve()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            var objects = new NatsObjContext(js);
            var store = await objects.CreateObjectStoreAsync(new NatsObjConfig("docs"));
            var other = await objects.CreateObjectStoreAsync(new NatsObjConfig("other"));
            var data = new byte[300_000];
            Random.Shared.NextBytes(data);
            var target = await store.PutAsync("report.pdf", data);

            var link = await store.AddLinkAsync("latest", target);
            Assert.Equal("docs", link.Options!.Link!.Bucket);
            Assert.Equal("report.pdf", link.Options.Link.Name);
            // Getting through the link reads the target's chunks.
            Assert.Equal(data, await store.GetBytesAsync("latest"));

            // A link into another bucket, and a link to a whole bucket.
            await other.PutAsync("note.txt", "hi"u8.ToArray());
            var note = await other.GetInfoAsync("note.txt");
            await store.AddLinkAsync("other-note", note);
            Assert.Equal("hi"u8.ToArray(), await store.GetBytesAsync("other-note"));
            var bucketLink = await store.AddBucketLinkAsync("all-other", other);
            Assert.Equal("other", bucketLink.Options!.Link!.Bucket);
            var info = await store.GetInfoAsync("all-other");
            Assert.Equal("other", info.Options!.Link!.Bucket);

            var names = new List<string>();
            await foreach (var entry in store.ListAsync())
            {
                names.Add(entry.Name);
            }
            Assert.Equal(["all-other", "latest", "other-note", "report.pdf"], names.Order());

            // The target deleted: the link is left dangling, and reading through it fails.
            await store.DeleteAsync("report.pdf");
            await Assert.ThrowsAnyAsync<NatsObjException>(async () => await store.GetBytesAsync("latest"));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task WatchSeesTheInitialSetThenUpdatesAndDeletes(bool go)
    {
        var (server, nats, js) = await StartAsync(go);
        await using (server)
        await using (nats)
        {
            var objects = new NatsObjContext(js);
            var store = await objects.CreateObjectStoreAsync(new NatsObjConfig("watched"));
            await store.PutAsync("a.txt", "one"u8.ToArray());
            await store.PutAsync("b.txt", "two"u8.ToArray());

            using var cts = new CancellationTokenSource(Long);
            var seen = new List<string>();
            var initialDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var watch = Task.Run(async () =>
            {
                // No OnNoData: NATS.Net 3.3.2 can call it before the initial entries arrive (seen with Go 2.9.10
                // too), and writing then made the initial set nondeterministic. The set has two entries.
                await foreach (var meta in store.WatchAsync(new NatsObjWatchOpts(), cts.Token))
                {
                    seen.Add($"{meta.Name}:{(meta.Deleted ? "deleted" : meta.Size.ToString(System.Globalization.CultureInfo.InvariantCulture))}");
                    if (seen.Count == 2)
                    {
                        initialDone.TrySetResult();
                    }
                    if (seen.Count == 5)
                    {
                        return;
                    }
                }
            }, cts.Token);
            await initialDone.Task.WaitAsync(cts.Token);
            await store.PutAsync("a.txt", "one more"u8.ToArray());
            await store.DeleteAsync("b.txt");
            await store.PutAsync("c.txt", "three"u8.ToArray());
            try
            {
                await watch;
            }
            catch (OperationCanceledException)
            {
                Assert.Fail($"the watch saw only [{string.Join(", ", seen)}]");
            }
            Assert.Equal(["a.txt:3", "b.txt:3", "a.txt:8", "b.txt:deleted", "c.txt:5"], seen);

            // UpdatesOnly skips what is already there.
            var before = await ConsumerNamesAsync(js, "OBJ_watched", cts.Token);
            var updates = new List<string>();
            using var cts2 = new CancellationTokenSource(Long);
            var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var second = Task.Run(async () =>
            {
                var enumerator = store.WatchAsync(new NatsObjWatchOpts { UpdatesOnly = true }, cts2.Token).GetAsyncEnumerator(cts2.Token);
                var next = enumerator.MoveNextAsync();
                ready.TrySetResult();
                while (await next)
                {
                    updates.Add(enumerator.Current.Name);
                    if (updates.Count == 1)
                    {
                        break;
                    }
                    next = enumerator.MoveNextAsync();
                }
                await enumerator.DisposeAsync();
            }, cts2.Token);
            await ready.Task;
            // The watch's consumer is created inside MoveNextAsync: wait until the server has it before writing.
            while ((await ConsumerNamesAsync(js, "OBJ_watched", cts2.Token)).Except(before).FirstOrDefault() is null)
            {
                await Task.Delay(20, cts2.Token);
            }
            await store.PutAsync("d.txt", "four"u8.ToArray());
            await second;
            Assert.Equal(["d.txt"], updates);
        }
    }

    [Fact]
    public async Task KeyValueWatchSeesDeletesAndPurgesAndTtlBucketsExpire()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            var kv = new NatsKVContext(js);
            var store = await kv.CreateStoreAsync(new NatsKVConfig("events") { History = 3 });
            await store.PutAsync("k1", "v1");

            using var cts = new CancellationTokenSource(Long);
            var seen = new List<string>();
            var watch = Task.Run(async () =>
            {
                await foreach (var e in store.WatchAsync<string>(">", cancellationToken: cts.Token))
                {
                    seen.Add($"{e.Key}:{e.Operation}:{e.Value}");
                    if (seen.Count == 4)
                    {
                        return;
                    }
                }
            }, cts.Token);
            await WaitForConsumerAsync(js, "KV_events", cts.Token);
            await store.PutAsync("k2", "v2");
            await store.DeleteAsync("k1");
            await store.PurgeAsync("k2");
            await watch;
            Assert.Equal(["k1:Put:v1", "k2:Put:v2", "k1:Del:", "k2:Purge:"], seen);

            // IncludeHistory replays every kept revision of a key.
            await store.PutAsync("h", "1");
            await store.PutAsync("h", "2");
            await store.PutAsync("h", "3");
            await store.PutAsync("h", "4");
            var history = new List<string?>();
            await foreach (var e in store.HistoryAsync<string>("h", cancellationToken: cts.Token))
            {
                history.Add(e.Value);
            }
            Assert.Equal(["2", "3", "4"], history);

            // A TTL bucket: the stream's max_age removes the entry; wait for it rather than for a time.
            var ttl = await kv.CreateStoreAsync(new NatsKVConfig("short") { MaxAge = TimeSpan.FromSeconds(1) });
            await ttl.PutAsync("x", "soon gone");
            Assert.Equal("soon gone", (await ttl.GetEntryAsync<string>("x")).Value);
            var status = await ttl.GetStatusAsync();
            Assert.Equal(TimeSpan.FromSeconds(1), status.Info.Config.MaxAge);
            while (true)
            {
                cts.Token.ThrowIfCancellationRequested();
                try
                {
                    await ttl.GetEntryAsync<string>("x", cancellationToken: cts.Token);
                }
                catch (NatsKVKeyNotFoundException)
                {
                    break;
                }
                await Task.Delay(100, cts.Token);
            }
        }
    }

    private static async Task<List<string>> ConsumerNamesAsync(NatsJSContext js, string stream, CancellationToken token)
    {
        var names = new List<string>();
        await foreach (var name in js.ListConsumerNamesAsync(stream, token))
        {
            names.Add(name);
        }
        return names;
    }

    private static async Task WaitForConsumerAsync(NatsJSContext js, string stream, CancellationToken token)
    {
        while (true)
        {
            var stream1 = await js.GetStreamAsync(stream, cancellationToken: token);
            if (stream1.Info.State.ConsumerCount > 0)
            {
                return;
            }
            await Task.Delay(20, token);
        }
    }
}
