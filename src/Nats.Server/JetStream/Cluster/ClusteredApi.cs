using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Who answers a $JS.API request in a cluster, where every JetStream server receives it (the API subscription's
/// interest is routed): as in Go, a stream's requests are answered by the server that holds it, and a stream
/// create and everything about a stream nobody holds by the meta leader. A create becomes an assignStream meta
/// entry; the server it places the stream on creates it when the entry is applied and answers the client.
/// </summary>
/// <remarks>
/// Placement takes the members holding the fewest stream replicas. A replicated stream (num_replicas 2-5) is answered
/// by its group's leader only, and deleted through the meta group.
/// </remarks>
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
        if (ConsumerOf(tokens) is { } consumer && meta.AssignedConsumer(request.Account.Name, stream, consumer) is { } assigned)
        {
            // A consumer's requests (info, pull requests, stepdown) are its group leader's, which delivers; an R1 one's its holder's.
            return assigned.Peers.Count == 1
                ? assigned.Peers[0] == meta.PeerId
                : meta.Replicated?.FindConsumer(request.Account.Name, stream, consumer) is { IsActiveLeader: true };
        }
        if (meta.Assigned(request.Account.Name, stream) is { Replicated: true })
        {
            // A replicated stream's requests are its leader's (its consumers live there too).
            return meta.Replicated?.Find(request.Account.Name, stream) is { IsActiveLeader: true };
        }
        if (request.JsAccount?.FindStream(stream) is { } held)
        {
            // A replicated stream recovered from disk before the meta group told this server about it (just after a
            // restart): its store may lag far behind, so only its group's leader answers, never this replica.
            return held.Config.Replicas <= 1 || held.Group is { IsActiveLeader: true };
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
        if (meta.Assigned(request.Account.Name, name) is { } existing)
        {
            return existing.Replicated
                ? meta.Replicated?.Find(request.Account.Name, name) is not { IsActiveLeader: true }
                : existing.Peer != meta.PeerId;
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
        else if (config.Placement?.Cluster is { Length: > 0 } cluster && cluster != meta.ClusterName)
        {
            error = JsErrors.ClusterNoPeers.WithErr("no suitable peers for placement");
        }
        else if (meta.Place(Math.Max(1, config.Replicas)) is { } peers)
        {
            var group = StreamAssignment.GroupName(request.Account.Name, name, peers.Count, config.Storage == StorageKind.Memory);
            var assignment = new StreamAssignment(request.Account.Name, name, peers, group, request.Subject,
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

    /// <summary>
    /// A replicated stream's delete goes through the meta group, as in Go: its leader proposes the removal, every
    /// member drops its replica and group when applying it, and the meta leader answers. False for other streams.
    /// </summary>
    public static bool TryDelete(MetaGroup meta, ApiRequest request, string name)
    {
        if (meta.Assigned(request.Account.Name, name) is not { Replicated: true } assignment)
        {
            return false;
        }
        if (meta.IsLeader)
        {
            var removal = assignment with { Subject = request.Subject, Reply = System.Text.Encoding.UTF8.GetString(request.Reply) };
            meta.Propose(StreamAssignment.RemoveOp, removal.Encode());
        }
        return true;
    }

    /// <summary>The consumer a CONSUMER.INFO/DELETE/MSG.NEXT/LEADER.STEPDOWN request is about, or null.</summary>
    private static string? ConsumerOf(string[] tokens) => tokens[2] != "CONSUMER" ? null : tokens[3] switch
    {
        "INFO" or "DELETE" when tokens.Length == 6 => tokens[5],
        "MSG" or "LEADER" when tokens.Length == 7 => tokens[6],
        _ => null,
    };

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
            "STREAM" when tokens[3] == "LEADER" => tokens.Length >= 6 ? tokens[5] : null,
            "STREAM" => tokens[4],
            "CONSUMER" when tokens[3] == "MSG" => tokens.Length >= 6 ? tokens[5] : null,
            "CONSUMER" when tokens[3] is "DURABLE" or "LEADER" => tokens.Length >= 6 ? tokens[5] : null,
            "CONSUMER" => tokens[4],
            "DIRECT" => tokens[4],
            _ => null,
        };
    }
}
