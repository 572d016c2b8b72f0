using System.Text;
using System.Text.RegularExpressions;
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
internal sealed partial record ReplicaContents(string Server, SortedDictionary<ulong, string> Messages, ulong LastSeq)
{
    public static async Task<ReplicaContents> ReadAsync(ClusterServer server, string stream, CancellationToken token)
    {
        var config = Path.Combine(server.TempDir, "read.conf");
        await File.WriteAllTextAsync(config, $$"""
            server_name: read{{server.Name}}
            accounts { SYS { users: [{ user: sys, password: pass }] }, APP { jetstream: enabled, users: [{ user: app, password: pass }] } }
            system_account: SYS
            # A server that just recovered a large store on a loaded machine can take more than the default 2 s to
            # answer a CONNECT.
            authorization { timeout: 30 }
            """, token);
        if (server.Kind == "go")
        {
            await MakeGoStreamStandaloneAsync(server, stream, config, token);
        }
        await using var reader = await KillableServer.StartAsync(server.Kind == "go", server.StoreDir, "-c", config);
        await using var nc = new NatsConnection(new NatsOpts
        {
            Url = reader.Url,
            AuthOpts = new NatsAuthOpts { Username = "app", Password = "pass" },
            RequestTimeout = TimeSpan.FromSeconds(30),
            // A server that just recovered a large store on a loaded machine can be slow to answer its first CONNECT.
            ConnectTimeout = TimeSpan.FromSeconds(30),
        });
        var js = new NatsJSContext(nc);
        var messages = new SortedDictionary<ulong, string>();
        INatsJSStream info;
        try
        {
            info = await js.GetStreamAsync(stream, cancellationToken: token);
        }
        catch (NatsJSApiException e) when (e.Error.ErrCode == 10059 && server.Kind == "go")
        {
            // Reported as a replica that lost everything (Go after a power cut of every server).
            return new ReplicaContents(server.Name, messages, 0);
        }
        catch (NatsJSApiException e) when (e.Error.ErrCode == 10059)
        {
            throw new InvalidDataException($"{server}: the standalone reader found no stream {stream} in {server.StoreDir}:\n{reader.Log.Text}");
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

    /// <summary>
    /// Go refuses to recover a replicated stream without a cluster (10074), so its meta.inf is rewritten to one replica. Its
    /// checksum file must then match: the keyed hash Go computes is taken from Go's own refusal line, which names it.
    /// </summary>
    private static async Task MakeGoStreamStandaloneAsync(ClusterServer server, string stream, string config, CancellationToken token)
    {
        var directory = Path.Combine(server.StoreDir, "jetstream", "APP", "streams", stream);
        var meta = Path.Combine(directory, "meta.inf");
        if (!File.Exists(meta))
        {
            return;
        }
        var text = await File.ReadAllTextAsync(meta, token);
        var replicas = ReplicasField().Replace(text, "\"num_replicas\":1");
        if (replicas == text)
        {
            return;
        }
        await File.WriteAllTextAsync(meta, replicas, token);
        await File.WriteAllTextAsync(Path.Combine(directory, "meta.sum"), "0", token);
        await using var probe = await KillableServer.StartAsync(true, server.StoreDir, "-c", config);
        var (line, _) = await probe.Log.WaitForAsync("checksums do not match", timeout: TimeSpan.FromSeconds(30));
        await File.WriteAllTextAsync(Path.Combine(directory, "meta.sum"), ComputedSum().Match(line).Groups[1].Value, token);
    }

    [GeneratedRegex("\"num_replicas\":\\s*[2-5]")]
    private static partial Regex ReplicasField();

    [GeneratedRegex("vs \"([0-9a-f]+)\"")]
    private static partial Regex ComputedSum();
}
