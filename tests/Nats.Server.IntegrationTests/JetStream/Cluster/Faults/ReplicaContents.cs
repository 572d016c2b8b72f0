using System.Text;
using Nats.Server.IntegrationTests.Cluster;
using Nats.Server.IntegrationTests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// What one replica holds, read from its own store: the cluster is stopped and each server's store directory is
/// opened by a standalone server of the same kind (no routes, so nothing can be repaired or forwarded on the way),
/// whose ordered consumer reads every message. Sequence → payload.
/// </summary>
internal sealed record ReplicaContents(string Server, SortedDictionary<ulong, string> Messages, ulong LastSeq)
{
    public static async Task<ReplicaContents> ReadAsync(ClusterServer server, string stream, CancellationToken token)
    {
        var config = Path.Combine(server.TempDir, "read.conf");
        await File.WriteAllTextAsync(config, $$"""
            server_name: read{{server.Name}}
            accounts { SYS { users: [{ user: sys, password: pass }] }, APP { jetstream: enabled, users: [{ user: app, password: pass }] } }
            system_account: SYS
            """, token);
        await using var reader = await KillableServer.StartAsync(server.Kind == "go", server.StoreDir, "-c", config);
        await using var nc = new NatsConnection(new NatsOpts
        {
            Url = reader.Url,
            AuthOpts = new NatsAuthOpts { Username = "app", Password = "pass" },
            RequestTimeout = TimeSpan.FromSeconds(30),
        });
        var js = new NatsJSContext(nc);
        var messages = new SortedDictionary<ulong, string>();
        INatsJSStream info;
        try
        {
            info = await js.GetStreamAsync(stream, cancellationToken: token);
        }
        catch (NatsJSApiException e) when (e.Error.ErrCode == 10059)
        {
            return new ReplicaContents(server.Name, messages, 0);
        }
        var state = info.Info.State;
        if (state.Messages == 0)
        {
            return new ReplicaContents(server.Name, messages, state.LastSeq);
        }
        var consumer = await js.CreateOrderedConsumerAsync(stream, cancellationToken: token);
        await foreach (var msg in consumer.ConsumeAsync<byte[]>(cancellationToken: token))
        {
            var seq = msg.Metadata?.Sequence.Stream ?? throw new InvalidDataException($"{server}: a message without metadata");
            if (!messages.TryAdd(seq, Encoding.UTF8.GetString(msg.Data ?? [])))
            {
                throw new InvalidDataException($"{server}: sequence {seq} delivered twice");
            }
            if (seq >= state.LastSeq)
            {
                break;
            }
        }
        return new ReplicaContents(server.Name, messages, state.LastSeq);
    }
}
