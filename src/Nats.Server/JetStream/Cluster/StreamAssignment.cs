using System.Text.Json;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's streamAssignment in the meta log (op assignStream 0 or removeStream 2, then JSON) with the fields used
/// here: the account (<c>client.acc</c>), the config (<c>stream</c>, kept as the request's JSON), the RAFT group
/// (<c>group.name</c>, <c>group.peers</c>), and the request's subject and reply so that a member answers the client.
/// </summary>
internal sealed record StreamAssignment(string Account, string Stream, IReadOnlyList<string> Peers, string Group, string Subject, string Reply, byte[] Config)
{
    public const byte Op = 0;

    public const byte RemoveOp = 2;

    /// <summary>The first peer: the only one of an R1 stream, the one that campaigns first in a new group.</summary>
    public string Peer => Peers[0];

    public bool Replicated => Peers.Count > 1;

    /// <summary>
    /// Go's group name <c>S-R&lt;n&gt;&lt;F|M&gt;-&lt;hash8&gt;</c>. An R1 name is derived from the stream (stable, as
    /// before); a replicated one is fresh per creation so a recreated stream never meets an old group's log.
    /// </summary>
    public static string GroupName(string account, string stream, int replicas, bool memory) => replicas <= 1
        ? "S-R1F-" + Hosting.NameHash.Of(account + " " + stream)
        : $"S-R{replicas}{(memory ? 'M' : 'F')}-" + Hosting.NameHash.Of(account + " " + stream + " " + Guid.NewGuid().ToString("N"));

    public const byte UpdateOp = 11;

    /// <summary>The entry body: Go's JSON (fields <c>client.acc</c>, <c>stream</c>, <c>group</c>, <c>subject</c>, <c>reply</c>) and a newline.</summary>
    public byte[] Encode()
    {
        using var config = JsonDocument.Parse(Config);
        var json = new StreamAssignmentJson
        {
            Client = new ClientRef { Account = Account },
            Stream = config.RootElement,
            Group = new RaftGroupJson { Name = Group, Peers = [.. Peers], Store = "file" },
            Subject = Subject,
            Reply = Reply,
        };
        return ClusterJson.Entry(0, json, ClusterJson.Context.StreamAssignmentJson)[1..];
    }

    public static StreamAssignment? Decode(ReadOnlySpan<byte> json)
    {
        if (ClusterJson.Decode(json, ClusterJson.Context.StreamAssignmentJson) is not { Client.Account: { } account, Group: { Peers.Count: > 0 } group } decoded
            || decoded.Stream.ValueKind != JsonValueKind.Object
            || !decoded.Stream.TryGetProperty("name", out var name) || name.ValueKind != JsonValueKind.String)
        {
            return null;
        }
        return new StreamAssignment(account, name.GetString()!, group.Peers, group.Name ?? "", decoded.Subject ?? "", decoded.Reply ?? "",
            System.Text.Encoding.UTF8.GetBytes(decoded.Stream.GetRawText()));
    }
}
