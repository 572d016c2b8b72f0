using System.Text;
using System.Text.Json;
using Nats.Server.Hosting;
using Nats.Server.JetStream.Api;
using Nats.Subjects;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// STREAM.UPDATE in a cluster, as Go's jsStreamUpdateRequest and jsClusteredStreamUpdateRequest: the meta leader checks
/// the new config against the assignment's (Go's update rules and texts), places new replicas for a scale-up from one
/// replica or keeps the stream's leader for a scale-down to one, and proposes an updateStream entry (op 11); the members
/// carry it out (<see cref="StreamUpdates"/>) and the stream's leader answers.
/// </summary>
/// <remarks>
/// Not yet: changing between two replica counts above one (refused with 10061), moves (placement changes), and
/// remapping the stream's consumers to the new peers as Go does.
/// </remarks>
internal static class ClusteredStreamUpdate
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    /// <summary>Handled here (the meta leader, in the background as Go) or left to it.</summary>
    public static bool TryUpdate(MetaGroup meta, JetStreamService service, ApiRequest request, string name)
    {
        if (meta.IsLeader)
        {
            _ = Task.Run(() => UpdateAsync(meta, service, request, name));
        }
        return true;
    }

    private static async Task UpdateAsync(MetaGroup meta, JetStreamService service, ApiRequest request, string name)
    {
        var (proposal, error) = await CheckAsync(meta, service, request, name).ConfigureAwait(false);
        if (proposal is not null)
        {
            meta.Propose(StreamAssignment.UpdateOp, proposal.Encode());
            return;
        }
        var response = new StreamCreateResponse { Type = Prefix + "stream_update_response", Error = error };
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamCreateResponse, error);
    }

    private static async Task<(StreamAssignment? Proposal, JsApiError? Error)> CheckAsync(MetaGroup meta, JetStreamService service, ApiRequest request,
        string name)
    {
        if (request.JsAccount is not { } js)
        {
            return (null, JsErrors.NotEnabledForAccount);
        }
        if (!request.TryParse(JsJson.Context.StreamConfig, out var requested) || requested is null)
        {
            return (null, JsErrors.InvalidJSON);
        }
        StreamConfig config;
        try
        {
            config = StreamConfigValidator.Check(requested, js, service.Options);
        }
        catch (JsApiException e)
        {
            return (null, e.Error);
        }
        if (config.Name != name)
        {
            return (null, JsErrors.StreamMismatch);
        }
        if (meta.Assigned(request.Account.Name, name) is not { } existing)
        {
            return (null, JsErrors.StreamNotFound);
        }
        StreamConfig old;
        try
        {
            old = StreamConfigValidator.Check(JsonSerializer.Deserialize(existing.Config, JsJson.Context.StreamConfig) ?? throw new JsonException(),
                js, service.Options);
            config = StreamUpdate.Check(old, config);
        }
        catch (JsApiException e)
        {
            return (null, e.Error.ErrCode == 0 ? JsErrors.StreamUpdate.WithErr(e.Error.Description) : e.Error);
        }
        catch (JsonException)
        {
            return (null, JsErrors.StreamNotFound);
        }
        if (SubjectsOverlap(meta, request.Account.Name, name, config.Subjects ?? []))
        {
            return (null, JsErrors.StreamSubjectOverlap);
        }
        var peers = existing.Peers;
        var group = existing.Group;
        if (config.Replicas != old.Replicas)
        {
            var memory = config.Storage == StorageKind.Memory;
            if (old.Replicas > 1 && config.Replicas > 1)
            {
                return (null, JsErrors.StreamReplicasNotUpdatable);
            }
            if (config.Replicas > 1)
            {
                // The member that held it leads first (Go's preferred peer), so nothing it acknowledged is lost.
                if (meta.Place(config.Replicas, [existing.Peer]) is not { } placed)
                {
                    return (null, JsErrors.ClusterNoPeers.WithErr("insufficient resources"));
                }
                peers = placed;
                group = StreamAssignment.GroupName(request.Account.Name, name, config.Replicas, memory);
            }
            else
            {
                peers = [await LeaderOfAsync(meta, request.Account.Name, existing).ConfigureAwait(false)];
                group = StreamAssignment.GroupName(request.Account.Name, name, 1, memory);
            }
        }
        var body = JsonSerializer.SerializeToUtf8Bytes(config, JsJson.Context.StreamConfig);
        return (new StreamAssignment(request.Account.Name, name, peers, group, request.Subject, Encoding.UTF8.GetString(request.Reply), body), null);
    }

    /// <summary>The peer a scale-down keeps: the stream's leader, which holds everything acknowledged (Go asks it for its info).</summary>
    private static async Task<string> LeaderOfAsync(MetaGroup meta, string account, StreamAssignment existing)
    {
        if (meta.Replicated?.Find(account, existing.Stream) is { Status.Leader: { } known } && existing.Peers.Contains(known))
        {
            return known;
        }
        if (meta.Gather is { } gather)
        {
            var infos = await gather.GatherAsync(account, [existing.Stream], TimeSpan.FromSeconds(4)).ConfigureAwait(false);
            if (infos.FirstOrDefault()?.Cluster?.Leader is { Length: > 0 } leader && NameHash.Of(leader) is var peer && existing.Peers.Contains(peer))
            {
                return peer;
            }
        }
        return existing.Peer;
    }

    /// <summary>Go's cc.subjectsOverlap: another stream of the account with a colliding subject.</summary>
    private static bool SubjectsOverlap(MetaGroup meta, string account, string name, List<string> subjects)
    {
        foreach (var other in meta.StreamsOf(account))
        {
            if (other.Stream == name)
            {
                continue;
            }
            var theirs = ClusteredListings.SubjectsOf(other);
            if (subjects.Any(s => theirs.Any(t => SubjectRules.Collide(s, t))))
            {
                return true;
            }
        }
        return false;
    }
}
