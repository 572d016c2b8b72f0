using System.Text.Json;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Who answers a $JS.API request in a cluster, where every JetStream server receives it (the API subscription's
/// interest is routed): as in Go, a stream's requests are answered by the server that holds it, and a stream
/// create and everything about a stream nobody holds by the meta leader. A create becomes an assignStream meta
/// entry; the server it places the stream on creates it when the entry is applied and answers the client.
/// </summary>
/// <remarks>R1 only: every stream is placed on one server (the member holding the fewest assignments).</remarks>
internal static class ClusteredApi
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    /// <summary>Whether this server answers <paramref name="request"/>; the others stay silent.</summary>
    public static bool ShouldHandle(MetaGroup meta, ApiRequest request, string[] tokens)
    {
        if (StreamOf(tokens) is not { } stream)
        {
            // Account-wide requests (INFO, STREAM.NAMES/LIST, unknown subjects): the meta leader's.
            return meta.IsLeader;
        }
        if (request.JsAccount?.FindStream(stream) is not null)
        {
            return true;
        }
        return meta.AssignedPeer(request.Account.Name, stream) is { } peer ? peer == meta.PeerId : meta.IsLeader;
    }

    /// <summary>
    /// A stream create: false when this server creates it itself (the stream is assigned here already: created
    /// again with the same config, or the name is in use); otherwise handled here (on the meta leader: checked
    /// and proposed) or left to others.
    /// </summary>
    public static bool TryCreate(MetaGroup meta, JetStreamService service, ApiRequest request, string name)
    {
        if (meta.AssignedPeer(request.Account.Name, name) is { } existing)
        {
            return existing != meta.PeerId;
        }
        if (!meta.IsLeader)
        {
            return true;
        }
        JsApiError? error = null;
        if (request.JsAccount is null)
        {
            error = JsErrors.NotEnabledForAccount;
        }
        else if (!request.TryParse(JsJson.Context.StreamConfig, out var config) || config is null)
        {
            error = JsErrors.InvalidJSON;
        }
        else if (config.Name != name)
        {
            error = JsErrors.StreamMismatch;
        }
        else if (config.Replicas > 1)
        {
            error = JsErrors.ClusterUnSupportFeature;
        }
        else if (meta.PlaceOne() is { } peer)
        {
            var assignment = new StreamAssignment(request.Account.Name, name, peer, request.Subject,
                System.Text.Encoding.UTF8.GetString(request.Reply), request.Body);
            meta.Propose(StreamAssignment.Op, assignment.Encode());
            return true;
        }
        else
        {
            error = JsErrors.ClusterNoPeers.WithErr("insufficient resources");
        }
        var response = new StreamCreateResponse { Type = Prefix + "stream_create_response", Error = error };
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamCreateResponse, error);
        return true;
    }

    /// <summary>The stream a request is about, from its subject tokens ($JS API ...), or null.</summary>
    private static string? StreamOf(string[] tokens)
    {
        if (tokens.Length < 5)
        {
            return null;
        }
        return tokens[2] switch
        {
            "STREAM" when tokens[3] == "MSG" => tokens.Length >= 6 ? tokens[5] : null,
            "STREAM" when tokens[3] is "NAMES" or "LIST" => null,
            "STREAM" => tokens[4],
            "CONSUMER" when tokens[3] == "MSG" => tokens.Length >= 6 ? tokens[5] : null,
            "CONSUMER" when tokens[3] == "DURABLE" => tokens.Length >= 6 ? tokens[5] : null,
            "CONSUMER" => tokens[4],
            "DIRECT" => tokens[4],
            _ => null,
        };
    }
}

/// <summary>
/// Go's streamAssignment in the meta log (op assignStream 0, then JSON) with the fields this slice uses: the
/// account (<c>client.acc</c>), the config (<c>stream</c>, kept as the request's JSON), the group's peers, and the
/// request's subject and reply so that the placed server answers the client.
/// </summary>
internal sealed record StreamAssignment(string Account, string Stream, string Peer, string Subject, string Reply, byte[] Config)
{
    public const byte Op = 0;

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
            json.WriteString("name", "S-R1F-" + Hosting.NameHash.Of(Account + " " + Stream));
            json.WriteStartArray("peers");
            json.WriteStringValue(Peer);
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
            return new StreamAssignment(root.GetProperty("client").GetProperty("acc").GetString()!, config.GetProperty("name").GetString()!,
                root.GetProperty("group").GetProperty("peers")[0].GetString()!, root.GetProperty("subject").GetString() ?? "",
                root.GetProperty("reply").GetString() ?? "", System.Text.Encoding.UTF8.GetBytes(config.GetRawText()));
        }
        catch (Exception e) when (e is JsonException or KeyNotFoundException or InvalidOperationException or IndexOutOfRangeException)
        {
            return null;
        }
    }
}
