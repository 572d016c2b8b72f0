using System.Security.Cryptography;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.KeyValueStore;
using NATS.Client.ObjectStore;
using NATS.Client.ObjectStore.Models;

namespace Nats.Server.IntegrationTests.JetStream.Consumers;

/// <summary>NATS.Net's Key-Value and Object Store layers (3.3.2) unchanged against our streams and consumers.</summary>
public sealed class NatsNetKeyValueTests
{
    private static async Task<(ITestServer Server, NatsConnection Connection, NatsJSContext Js)> StartAsync()
    {
        var server = await TestServers.StartOursAsync(new ServerSettings { JetStream = true });
        var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{server.Port}", RequestTimeout = TimeSpan.FromSeconds(20) });
        await connection.ConnectAsync();
        return (server, connection, new NatsJSContext(connection));
    }

    [Fact]
    public async Task PutGetUpdateDeletePurgeKeysHistoryWatch()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            var kv = new NatsKVContext(js);
            var store = await kv.CreateStoreAsync(new NatsKVConfig("config") { History = 5 });

            var r1 = await store.PutAsync("color", "red");
            var r2 = await store.PutAsync("color", "blue");
            Assert.Equal(r1 + 1, r2);
            var entry = await store.GetEntryAsync<string>("color");
            Assert.Equal("blue", entry.Value);
            Assert.Equal(r2, entry.Revision);

            var r3 = await store.UpdateAsync("color", "green", r2);
            await Assert.ThrowsAsync<NatsKVWrongLastRevisionException>(async () => await store.UpdateAsync("color", "black", r2));
            await store.CreateAsync("size", "L");
            await Assert.ThrowsAsync<NatsKVCreateException>(async () => await store.CreateAsync("size", "M"));

            var history = new List<string?>();
            await foreach (var h in store.HistoryAsync<string>("color"))
            {
                history.Add(h.Value);
            }
            Assert.Equal(["red", "blue", "green"], history);

            var keys = new List<string>();
            await foreach (var key in store.GetKeysAsync())
            {
                keys.Add(key);
            }
            Assert.Equal(["color", "size"], keys.Order());

            await store.DeleteAsync("size");
            await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await store.GetEntryAsync<string>("size"));
            await store.PurgeAsync("color");
            await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await store.GetEntryAsync<string>("color"));

            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            var watched = new List<string>();
            var watch = Task.Run(async () =>
            {
                await foreach (var e in store.WatchAsync<string>("w.*", cancellationToken: cts.Token))
                {
                    if (e.Operation == NatsKVOperation.Put)
                    {
                        watched.Add($"{e.Key}={e.Value}");
                    }
                    if (watched.Count == 2)
                    {
                        return;
                    }
                }
            }, cts.Token);
            await store.PutAsync("w.a", "1");
            await store.PutAsync("w.b", "2");
            await watch;
            Assert.Equal(["w.a=1", "w.b=2"], watched);
            _ = r3;
        }
    }

    [Fact]
    public async Task ObjectStorePutGetListDeleteSeveralMegabytes()
    {
        var (server, nats, js) = await StartAsync();
        await using (server)
        await using (nats)
        {
            var objects = new NatsObjContext(js);
            var store = await objects.CreateObjectStoreAsync(new NatsObjConfig("files"));
            var data = RandomNumberGenerator.GetBytes(5 * 1024 * 1024 + 123);
            var meta = await store.PutAsync("big.bin", data);
            Assert.Equal(data.Length, (int)meta.Size);
            await store.PutAsync("small.txt", "hello"u8.ToArray());

            var back = await store.GetBytesAsync("big.bin");
            Assert.Equal(SHA256.HashData(data), SHA256.HashData(back));

            var names = new List<string>();
            await foreach (var info in store.ListAsync())
            {
                names.Add(info.Name);
            }
            Assert.Equal(["big.bin", "small.txt"], names.Order());

            await store.DeleteAsync("small.txt");
            await Assert.ThrowsAsync<NatsObjNotFoundException>(async () => await store.GetInfoAsync("small.txt"));
            Assert.Equal(data.Length, (int)(await store.GetInfoAsync("big.bin")).Size);
        }
    }
}
