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

    public byte[] Encode()
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteStartObject("client");
            json.WriteString("acc", Account);
            json.WriteEndObject();
            json.WritePropertyName("stream");
            using (var config = JsonDocument.Parse(Config))
            {
                config.RootElement.WriteTo(json);
            }
            json.WriteStartObject("group");
            json.WriteString("name", Group);
            json.WriteStartArray("peers");
            foreach (var peer in Peers)
            {
                json.WriteStringValue(peer);
            }
            json.WriteEndArray();
            json.WriteString("store", "file");
            json.WriteEndObject();
            json.WriteString("subject", Subject);
            json.WriteString("reply", Reply);
            json.WriteEndObject();
        }
        buffer.WriteByte((byte)'\n');
        return buffer.ToArray();
    }

    public static StreamAssignment? Decode(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            var root = document.RootElement;
            var config = root.GetProperty("stream");
            var group = root.GetProperty("group");
            var peers = group.GetProperty("peers").EnumerateArray().Select(p => p.GetString()!).ToList();
            if (peers.Count == 0)
            {
                return null;
            }
            return new StreamAssignment(root.GetProperty("client").GetProperty("acc").GetString()!, config.GetProperty("name").GetString()!,
                peers, group.GetProperty("name").GetString() ?? "", root.GetProperty("subject").GetString() ?? "",
                root.GetProperty("reply").GetString() ?? "", System.Text.Encoding.UTF8.GetBytes(config.GetRawText()));
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or IndexOutOfRangeException)
        {
            return null;
        }
    }
}
