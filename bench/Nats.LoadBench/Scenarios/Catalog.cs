using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// Every row of the comparison table, in table order. Names are the --row keys. To add a row,
/// write its class (see README "Adding a row") and add one line here.
/// </summary>
internal static class Catalog
{
    public const string Core = "Core NATS pub/sub throughput";
    public const string ReqRep = "Core NATS request/reply";
    public const string JetStream = "JetStream";
    public const string JetStreamScale = "JetStream at scale (file stream: publish, clean stop, restart, consume)";
    public const string Tls = "TLS";
    public const string Ws = "WebSocket";
    public const string Mqtt = "MQTT";
    public const string Routes = "Routes (cluster of one kind: Go+Go or ours+ours)";
    public const string Links = "Gateways and leaf nodes (two servers of one kind: Go+Go or ours+ours)";
    public const string LinksReqRep = "Request/reply across a gateway (two servers of one kind)";
    public const string Limit = "Machine limit (loopback sink, no server)";
    public const string R3 = "JetStream R3 (3-node cluster of one kind, file storage, clients on the leader)";
    public const string Failover = "JetStream R3 failover (leader killed -> first acknowledged publish)";
    private const NATS.Client.JetStream.Models.StreamConfigStorage FileStorage = NATS.Client.JetStream.Models.StreamConfigStorage.File;

    public static IReadOnlyList<Scenario> All { get; } =
    [
        // Smoke counts keep each subscriber's backlog under 64 MiB (Go's default max_pending), so
        // the CI smoke run checks counts and plumbing; cuts under sustained load are the full run's job.
        new PubSubScenario { Name = "pub-16b", Section = Core, Title = "Pub only", PayloadSize = 16, SmokeCount = 100_000 },
        new PubSubScenario { Name = "pub-128b", Section = Core, Title = "Pub only", PayloadSize = 128, SmokeCount = 100_000 },
        new PubSubScenario { Name = "pubsub-16b", Section = Core, Title = "Pub/sub 1:1", PayloadSize = 16, Subscribers = 1, SmokeCount = 100_000 },
        new PubSubScenario { Name = "pubsub-16kb", Section = Core, Title = "Pub/sub 1:1", PayloadSize = 16 * 1024, Subscribers = 1, SmokeCount = 2_000 },
        new PubSubScenario { Name = "fanout-128b", Section = Core, Title = "Fan-out 1:4", PayloadSize = 128, Subscribers = 4, SmokeCount = 25_000 },
        new PubSubScenario { Name = "multi-4x4-128b", Section = Core, Title = "Multi 4 pub x 4 sub", PayloadSize = 128, Publishers = 4, Subscribers = 4, SmokeCount = 10_000 },
        new ReqReplyScenario { Name = "reqrep-1x1-128b", Section = ReqRep, Title = "1 client, 1 service", PayloadSize = 128, HasLatency = true, SmokeCount = 2_000 },
        new ReqReplyScenario { Name = "reqrep-10x2q-16b", Section = ReqRep, Title = "10 clients, 2 services (queue group)", PayloadSize = 16, Clients = 10, Services = 2, QueueGroup = true, HasLatency = true, SmokeCount = 5_000 },
        new JsPublishScenario { Name = "js-pub-sync-16b-mem", Section = JetStream, Title = "Sync publish, memory", PayloadSize = 16, Window = 1, Features = Features.JetStream, SmokeCount = 2_000 },
        new JsPublishScenario { Name = "js-pub-async-128b-file", Section = JetStream, Title = "Async publish (100 acks in flight), file", PayloadSize = 128, Window = 100, Storage = NATS.Client.JetStream.Models.StreamConfigStorage.File, Features = Features.JetStream, SmokeCount = 10_000 },
        // Go 2.9.10 acknowledges file-stream publishes before any fsync (it syncs every 2 minutes); ours
        // waits for the fsync by default. This row gives ours Go's policy, so both figures come from one run.
        new JsPublishScenario { Name = "js-pub-async-128b-file-gosync", Section = JetStream, Title = "Async publish (100 acks in flight), file, Go's sync policy (ours: sync_interval 2m)", PayloadSize = 128, Window = 100, Storage = NATS.Client.JetStream.Models.StreamConfigStorage.File, Features = Features.JetStream, OursJetStreamConfig = "  sync_interval: \"2m\"\n", SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-ordered-consumer", Section = JetStream, Title = "Ordered consumer", PayloadSize = 128, Kind = ConsumeKind.Ordered, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch", Section = JetStream, Title = "Durable consumer fetch (batch 500, explicit ack)", PayloadSize = 128, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-1000", Section = JetStream, Title = "Durable consumer fetch (batch 1000, explicit ack)", PayloadSize = 128, Batch = 1000, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-ackall", Section = JetStream, Title = "Durable consumer fetch (batch 500, ack all)", PayloadSize = 128, AckAll = true, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-1000-ackall", Section = JetStream, Title = "Durable consumer fetch (batch 1000, ack all)", PayloadSize = 128, Batch = 1000, AckAll = true, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-push-ack-none", Section = JetStream, Title = "Push consumer (ack none)", PayloadSize = 128, Kind = ConsumeKind.Push, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-ordered-consumer-file", Section = JetStream, Title = "Ordered consumer, file", PayloadSize = 128, Kind = ConsumeKind.Ordered, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-file", Section = JetStream, Title = "Durable consumer fetch (batch 500, explicit ack), file", PayloadSize = 128, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-1000-file", Section = JetStream, Title = "Durable consumer fetch (batch 1000, explicit ack), file", PayloadSize = 128, Batch = 1000, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-ackall-file", Section = JetStream, Title = "Durable consumer fetch (batch 500, ack all), file", PayloadSize = 128, AckAll = true, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-1000-ackall-file", Section = JetStream, Title = "Durable consumer fetch (batch 1000, ack all), file", PayloadSize = 128, Batch = 1000, AckAll = true, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-durable-fetch-1000-acknone-file", Section = JetStream, Title = "Durable consumer fetch (batch 1000, ack none), file", PayloadSize = 128, Batch = 1000, AckNone = true, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        new JsConsumeScenario { Name = "js-push-ack-none-file", Section = JetStream, Title = "Push consumer (ack none), file", PayloadSize = 128, Kind = ConsumeKind.Push, Storage = FileStorage, Features = Features.JetStream, SmokeCount = 10_000 },
        // A smoke run checks the plumbing (stop, restart, every message read back) on a small stream.
        new JsScaleScenario { Name = "js-scale-2m-file", Section = JetStreamScale, Title = "2M msgs on 1,000 subjects, consume after restart (fetch 1000, ack none)", PayloadSize = 128, Count = 2_000_000, Features = Features.JetStream, SmokeCount = 50_000 },
        new PubSubScenario { Name = "tls-pubsub-128b", Section = Tls, Title = "TLS pub/sub 1:1", PayloadSize = 128, Subscribers = 1, Transport = Transport.Tls, Features = Features.Tls, SmokeCount = 20_000 },
        new PubSubScenario { Name = "tls-pub-128b", Section = Tls, Title = "TLS pub only", PayloadSize = 128, Transport = Transport.Tls, Features = Features.Tls, SmokeCount = 20_000 },
        new PubSubScenario { Name = "ws-pubsub-128b", Section = Ws, Title = "WebSocket pub/sub 1:1", PayloadSize = 128, Subscribers = 1, Transport = Transport.WebSocket, Features = Features.WebSocket, SmokeCount = 20_000 },
        new PubSubScenario { Name = "ws-pub-128b", Section = Ws, Title = "WebSocket pub only", PayloadSize = 128, Transport = Transport.WebSocket, Features = Features.WebSocket, SmokeCount = 20_000 },
        new MqttScenario { Name = "mqtt-pubsub-128b", Section = Mqtt, Title = "MQTT pub/sub QoS 0", PayloadSize = 128, Features = Features.Mqtt, SmokeCount = 10_000 },
        new MqttScenario { Name = "mqtt-qos1-128b", Section = Mqtt, Title = "MQTT pub/sub QoS 1", PayloadSize = 128, Qos = 1, Features = Features.Mqtt, SmokeCount = 10_000 },
        new MqttScenario { Name = "mqtt5-pubsub-128b", Section = Mqtt, Title = "MQTT 5 pub/sub QoS 0 (Go: 3.1.1)", PayloadSize = 128, Version5 = true, Features = Features.Mqtt, SmokeCount = 10_000 },
        new MqttScenario { Name = "mqtt5-qos1-128b", Section = Mqtt, Title = "MQTT 5 pub/sub QoS 1 (Go: 3.1.1)", PayloadSize = 128, Qos = 1, Version5 = true, Features = Features.Mqtt, SmokeCount = 10_000 },
        new MqttScenario { Name = "mqtt-ws-pubsub-128b", Section = Mqtt, Title = "MQTT over WebSocket pub/sub QoS 0", PayloadSize = 128, WebSocket = true, Features = Features.Mqtt | Features.WebSocket, SmokeCount = 10_000 },
        new MqttScenario { Name = "mqtt-cross-128b", Section = Mqtt, Title = "Cross-protocol NATS to MQTT", PayloadSize = 128, NatsPublisher = true, Features = Features.Mqtt, SmokeCount = 10_000 },
        // Publisher (or requester) on server 0, subscribers (services) on the others; each message crosses a route.
        new PubSubScenario { Name = "route-pubsub-128b", Section = Routes, Title = "Pub/sub 1:1 across a route (pub on A, sub on B)", PayloadSize = 128, Subscribers = 1, ClusterSize = 2, SubscriberServers = [1], SmokeCount = 50_000 },
        new PubSubScenario { Name = "route-fanout-128b", Section = Routes, Title = "Fan-out 1:4 across 3 servers (pub on A, subs on B, C, A, B)", PayloadSize = 128, Subscribers = 4, ClusterSize = 3, SubscriberServers = [1, 2, 0, 1], SmokeCount = 25_000 },
        new ReqReplyScenario { Name = "route-reqrep-1x1-128b", Section = Routes, Title = "Request/reply across a route (client on A, service on B)", PayloadSize = 128, HasLatency = true, ClusterSize = 2, ServiceServer = 1, SmokeCount = 2_000 },
        // Publisher (or requester) on server 0, the subscriber (service) on server 1: each message crosses the gateway or the leaf connection.
        new PubSubScenario { Name = "gw-pubsub-128b", Section = Links, Title = "Pub/sub 1:1 across a gateway (pub in cluster A, sub in B)", PayloadSize = 128, Subscribers = 1, ClusterSize = 2, Link = ClusterLink.Gateway, SubscriberServers = [1], SmokeCount = 50_000 },
        new PubSubScenario { Name = "leaf-pubsub-128b", Section = Links, Title = "Pub/sub 1:1 across a leaf connection (pub on the hub, sub on the leaf)", PayloadSize = 128, Subscribers = 1, ClusterSize = 2, Link = ClusterLink.HubThenLeaf, SubscriberServers = [1], SmokeCount = 50_000 },
        new PubSubScenario { Name = "leaf-up-pubsub-128b", Section = Links, Title = "Pub/sub 1:1 across a leaf connection (pub on the leaf, sub on the hub)", PayloadSize = 128, Subscribers = 1, ClusterSize = 2, Link = ClusterLink.LeafThenHub, SubscriberServers = [1], SmokeCount = 50_000 },
        new ReqReplyScenario { Name = "gw-reqrep-1x1-128b", Section = LinksReqRep, Title = "Request/reply across a gateway (client in A, service in B)", PayloadSize = 128, HasLatency = true, ClusterSize = 2, Link = ClusterLink.Gateway, ServiceServer = 1, SmokeCount = 2_000 },
        // Go 2.9.10 acknowledges an R3 publish once a quorum has it in memory; ours once a quorum has it fsynced.
        new JsPublishScenario { Name = "js-r3-pub-async-128b-file", Section = R3, Title = "R3 async publish (100 acks in flight)", PayloadSize = 128, Window = 100, Replicas = 3, Storage = FileStorage, Features = Features.JetStream, ClusterSize = 3, SmokeCount = 5_000 },
        new JsPublishScenario { Name = "js-r3-pub-sync-128b-file", Section = R3, Title = "R3 sync publish", PayloadSize = 128, Window = 1, Replicas = 3, Storage = FileStorage, Features = Features.JetStream, ClusterSize = 3, SmokeCount = 500 },
        new JsConsumeScenario { Name = "js-r3-durable-fetch-file", Section = R3, Title = "R3 durable consumer fetch (batch 500, explicit ack)", PayloadSize = 128, Replicas = 3, Storage = FileStorage, Features = Features.JetStream, ClusterSize = 3, SmokeCount = 5_000 },
        new JsConsumeScenario { Name = "js-r3-durable-fetch-1000-file", Section = R3, Title = "R3 durable consumer fetch (batch 1000, explicit ack)", PayloadSize = 128, Batch = 1000, Replicas = 3, Storage = FileStorage, Features = Features.JetStream, ClusterSize = 3, SmokeCount = 5_000 },
        new JsConsumeScenario { Name = "js-r3-ordered-consumer-file", Section = R3, Title = "R3 ordered consumer", PayloadSize = 128, Kind = ConsumeKind.Ordered, Replicas = 3, Storage = FileStorage, Features = Features.JetStream, ClusterSize = 3, SmokeCount = 5_000 },
        new JsFailoverScenario { Name = "js-r3-failover", Section = Failover, Title = "R3 file stream, sync publisher on a follower, leader kill -9", PayloadSize = 128, Features = Features.JetStream, ClusterSize = 3, SmokeCount = 200 },
        new PubSubScenario { Name = "limit-pub-16b", Section = Limit, Title = "Raw publisher into sink", PayloadSize = 16, IsLimit = true, SmokeCount = 100_000 },
        new PubSubScenario { Name = "limit-pub-128b", Section = Limit, Title = "Raw publisher into sink", PayloadSize = 128, IsLimit = true, SmokeCount = 100_000 },
    ];

    public static Scenario? Find(string name) => All.FirstOrDefault(s => s.Name.Equals(name, StringComparison.OrdinalIgnoreCase));
}
