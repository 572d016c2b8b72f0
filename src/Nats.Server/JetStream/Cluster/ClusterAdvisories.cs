using System.Buffers;
using System.Text.Json;
using Nats.Server.Accounts.SystemEvents;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's clustering advisories: <c>$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.&lt;stream&gt;</c> and <c>…STREAM.QUORUM_LOST…</c>,
/// <c>…CONSUMER.LEADER_ELECTED.&lt;stream&gt;.&lt;consumer&gt;</c> and <c>…CONSUMER.QUORUM_LOST…</c>, sent by the member that
/// became leader (or lost its quorum) into the stream's account and, with <c>account</c> filled in, into the system account.
/// </summary>
internal static class ClusterAdvisories
{
    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = GoJsonEncoder.Instance };
    private static readonly EventIds Ids = new();

    /// <summary>Go throttles quorum-lost advisories to one per 10 s per stream or consumer.</summary>
    public static readonly TimeSpan QuorumLostInterval = TimeSpan.FromSeconds(10);

    public static void StreamLeaderElected(MetaGroup meta, JsStream stream, RaftStatus status, IReadOnlyList<string> peers) =>
        Send(meta, stream, "STREAM.LEADER_ELECTED." + stream.Name, "io.nats.jetstream.advisory.v1.stream_leader_elected", null, meta.Server.ServerName,
            status, peers);

    public static void StreamQuorumLost(MetaGroup meta, JsStream stream, RaftStatus status, IReadOnlyList<string> peers) =>
        Send(meta, stream, "STREAM.QUORUM_LOST." + stream.Name, "io.nats.jetstream.advisory.v1.stream_quorum_lost", null, null, status, peers);

    public static void ConsumerLeaderElected(MetaGroup meta, JsStream stream, string consumer, RaftStatus status, IReadOnlyList<string> peers) =>
        Send(meta, stream, $"CONSUMER.LEADER_ELECTED.{stream.Name}.{consumer}", "io.nats.jetstream.advisory.v1.consumer_leader_elected", consumer,
            meta.Server.ServerName, status, peers);

    public static void ConsumerQuorumLost(MetaGroup meta, JsStream stream, string consumer, RaftStatus status, IReadOnlyList<string> peers) =>
        Send(meta, stream, $"CONSUMER.QUORUM_LOST.{stream.Name}.{consumer}", "io.nats.jetstream.advisory.v1.consumer_quorum_lost", consumer, null,
            status, peers);

    private static void Send(MetaGroup meta, JsStream stream, string kind, string type, string? consumer, string? leader, RaftStatus status,
        IReadOnlyList<string> peers)
    {
        var service = stream.Account.Service;
        var account = stream.Account.Account;
        var subject = "$JS.EVENT.ADVISORY." + kind;
        var replicas = Replicas(meta, status, peers);
        var id = Ids.Next();
        var timestamp = GoTime.Now().ToString();
        if (!ReferenceEquals(account, meta.Server.SystemAccount))
        {
            service.Transport.PublishAdvisory(account, subject, Encode(type, id, timestamp, null, stream.Name, consumer, leader, replicas, service.Options.Domain));
        }
        if (meta.Server.SystemAccount is { } system)
        {
            service.Transport.PublishAdvisory(system, subject,
                Encode(type, id, timestamp, account.Name, stream.Name, consumer, leader, replicas, service.Options.Domain));
        }
    }

    /// <summary>Go's s.replicas(node): every member whose server is known, this one included.</summary>
    private static List<Monitoring.PeerInfo> Replicas(MetaGroup meta, RaftStatus status, IReadOnlyList<string> peers)
    {
        var replicas = new List<Monitoring.PeerInfo> { new() { Name = meta.Server.ServerName, Current = true, Peer = meta.PeerId } };
        foreach (var peer in GroupClusterInfo.Build(meta, status, peers, activeLeader: true).Replicas ?? [])
        {
            if (!peer.Offline)
            {
                replicas.Add(peer);
            }
        }
        return replicas;
    }

    private static ReadOnlySpan<byte> Encode(string type, string id, string timestamp, string? account, string stream, string? consumer, string? leader,
        List<Monitoring.PeerInfo> replicas, string domain)
    {
        var buffer = new ArrayBufferWriter<byte>(512);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("type", type);
            json.WriteString("id", id);
            json.WriteString("timestamp", timestamp);
            if (account is not null)
            {
                json.WriteString("account", account);
            }
            json.WriteString("stream", stream);
            if (consumer is not null)
            {
                json.WriteString("consumer", consumer);
            }
            if (leader is not null)
            {
                json.WriteString("leader", leader);
            }
            json.WriteStartArray("replicas");
            foreach (var replica in replicas)
            {
                json.WriteStartObject();
                json.WriteString("name", replica.Name);
                json.WriteBoolean("current", replica.Current);
                if (replica.Offline)
                {
                    json.WriteBoolean("offline", true);
                }
                json.WriteNumber("active", replica.Active);
                if (replica.Lag > 0)
                {
                    json.WriteNumber("lag", replica.Lag);
                }
                json.WriteString("peer", replica.Peer);
                json.WriteEndObject();
            }
            json.WriteEndArray();
            if (!string.IsNullOrEmpty(domain))
            {
                json.WriteString("domain", domain);
            }
            json.WriteEndObject();
        }
        return buffer.WrittenSpan;
    }
}
