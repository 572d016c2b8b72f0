using System.Text.Json;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's consumerAssignment in the meta log (op assignConsumer 1 or removeConsumer 3, then JSON): the account
/// (<c>client.acc</c>), <c>created</c>, <c>name</c>, <c>stream</c>, the config (<c>consumer</c>), the RAFT group
/// (<c>group.name</c>, <c>group.peers</c>: the stream's) and the request's subject and reply, so that the consumer's
/// leader answers the client.
/// </summary>
internal sealed record ConsumerAssignment(string Account, string Stream, string Name, GoTime Created, ConsumerConfig Config,
    IReadOnlyList<string> Peers, string Group, string Subject, string Reply)
{
    public const byte Op = 1;

    public const byte RemoveOp = 3;

    /// <summary>Go's <c>C-R&lt;n&gt;&lt;F|M&gt;-&lt;hash8&gt;</c>, fresh per creation so a recreated consumer never meets an old log.</summary>
    public static string GroupName(string account, string stream, string name, int replicas, bool memory) =>
        $"C-R{replicas}{(memory ? 'M' : 'F')}-" + Hosting.NameHash.Of(account + " " + stream + " " + name + " " + Guid.NewGuid().ToString("N"));

    /// <summary>The entry body: Go's JSON and a newline.</summary>
    public byte[] Encode()
    {
        var json = new ConsumerAssignmentJson
        {
            Client = new ClientRef { Account = Account },
            Created = Created.ToString(),
            Name = Name,
            Stream = Stream,
            Consumer = JsonSerializer.SerializeToElement(Config, ConsumerJson.Context.ConsumerConfig),
            Group = new RaftGroupJson { Name = Group, Peers = [.. Peers], Store = Config.MemoryStorage ? "memory" : "file" },
            Subject = Subject,
            Reply = Reply,
        };
        return ClusterJson.Entry(0, json, ClusterJson.Context.ConsumerAssignmentJson)[1..];
    }

    /// <summary>Decodes an entry body; null when malformed (never trusted: it came over the network).</summary>
    public static ConsumerAssignment? Decode(ReadOnlySpan<byte> json)
    {
        if (ClusterJson.Decode(json, ClusterJson.Context.ConsumerAssignmentJson) is not
            { Client.Account: { } account, Stream: { } stream, Name: { } name, Group: { Peers.Count: > 0 } group } decoded
            || decoded.Consumer.ValueKind != JsonValueKind.Object || !GoTime.TryParse(decoded.Created ?? "", out var created))
        {
            return null;
        }
        try
        {
            return decoded.Consumer.Deserialize(ConsumerJson.Context.ConsumerConfig) is { } config
                ? new ConsumerAssignment(account, stream, name, created, config, group.Peers, group.Name ?? "", decoded.Subject ?? "", decoded.Reply ?? "")
                : null;
        }
        catch (Exception e) when (e is JsonException or NotSupportedException or InvalidOperationException)
        {
            return null;
        }
    }
}
