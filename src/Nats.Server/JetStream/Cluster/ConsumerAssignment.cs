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

    public byte[] Encode()
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteStartObject("client");
            json.WriteString("acc", Account);
            json.WriteEndObject();
            json.WriteString("created", Created.ToString());
            json.WriteString("name", Name);
            json.WriteString("stream", Stream);
            json.WritePropertyName("consumer");
            JsonSerializer.Serialize(json, Config, ConsumerJson.Context.ConsumerConfig);
            json.WriteStartObject("group");
            json.WriteString("name", Group);
            json.WriteStartArray("peers");
            foreach (var peer in Peers)
            {
                json.WriteStringValue(peer);
            }
            json.WriteEndArray();
            json.WriteString("store", Config.MemoryStorage ? "memory" : "file");
            json.WriteEndObject();
            json.WriteString("subject", Subject);
            json.WriteString("reply", Reply);
            json.WriteEndObject();
        }
        buffer.WriteByte((byte)'\n');
        return buffer.ToArray();
    }

    /// <summary>Decodes an entry body; null when malformed (never trusted: it came over the network).</summary>
    public static ConsumerAssignment? Decode(ReadOnlySpan<byte> json)
    {
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            var root = document.RootElement;
            var group = root.GetProperty("group");
            var peers = group.GetProperty("peers").EnumerateArray().Select(p => p.GetString()!).ToList();
            var config = root.GetProperty("consumer").Deserialize(ConsumerJson.Context.ConsumerConfig);
            if (peers.Count == 0 || config is null || !GoTime.TryParse(root.GetProperty("created").GetString() ?? "", out var created))
            {
                return null;
            }
            return new ConsumerAssignment(root.GetProperty("client").GetProperty("acc").GetString()!, root.GetProperty("stream").GetString()!,
                root.GetProperty("name").GetString()!, created, config, peers, group.GetProperty("name").GetString() ?? "",
                root.GetProperty("subject").GetString() ?? "", root.GetProperty("reply").GetString() ?? "");
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or IndexOutOfRangeException or NotSupportedException)
        {
            return null;
        }
    }
}
