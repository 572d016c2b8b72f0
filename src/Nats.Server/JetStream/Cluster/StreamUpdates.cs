using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A committed stream update (Go's updateStreamOp, processClusterUpdateStream) on one server, in meta log order: every
/// member applies the new config; a scale-up from one replica starts the group on the member that held the stream (it
/// leads first and answers) and creates the new replicas, which catch up from it (<see cref="StreamCatchup"/>); a
/// scale-down to one replica keeps the member the meta leader chose (the stream's leader), which leaves the group and
/// answers, while the others drop their replica. Same-size updates are answered by the stream's leader.
/// </summary>
internal static class StreamUpdates
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    public static async Task ApplyAsync(ReplicatedStreams streams, StreamAssignment previous, StreamAssignment updated, bool replay)
    {
        var meta = streams.Meta;
        var service = streams.Service;
        if (meta.Server.FindAccount(updated.Account) is not { } account || service.FindAccount(account) is not { } js)
        {
            return;
        }
        StreamConfig? config;
        try
        {
            config = JsonSerializer.Deserialize(updated.Config, JsJson.Context.StreamConfig);
        }
        catch (JsonException)
        {
            config = null;
        }
        if (config is null)
        {
            return;
        }
        var stream = js.FindStream(updated.Stream);
        if (!updated.Peers.Contains(meta.PeerId))
        {
            // Not (or no longer) a member: a scale-down removed this replica.
            var group = await streams.StopGroupsAsync(updated.Account, updated.Stream, consumerGroups: true).ConfigureAwait(false);
            if (stream is not null && (group is null || ReferenceEquals(stream.Group, group)))
            {
                streams.Logger.LogInformation("JetStream removing stream '{Account} > {Stream}' from this server", updated.Account, updated.Stream);
                js.DeleteStream(stream);
            }
            return;
        }
        if (!previous.Peers.Contains(meta.PeerId))
        {
            // Added by a scale-up: the replica starts empty (or as far as it got before a restart) and its group catches
            // it up from the leader; it may lead only once caught up.
            streams.AssignCore(updated, replay, answerCreate: false, observer: true);
            return;
        }
        if (stream is null)
        {
            return;
        }
        if (updated.Replicated && !previous.Replicated && stream.Group is null)
        {
            // One replica to several, on the member that held it: the new config, then its group, which it leads first.
            Configure(service, js, stream, config);
            var group = new StreamGroup(meta, stream, updated, streams.Logger);
            stream.Group = group;
            streams.AddGroup(updated, group);
            Action<StreamGroup>? answer = !replay && updated.Reply.Length > 0 ? _ => Task.Run(() => Answer(streams, account, js, stream, updated)) : null;
            group.Start(meta.StoreDirectory, streams.System, campaign: true, answer);
            return;
        }
        if (!updated.Replicated && stream.Group is not null)
        {
            // Several replicas to one, this one kept: it leaves the group and takes publishes alone.
            await streams.StopGroupsAsync(updated.Account, updated.Stream, consumerGroups: false).ConfigureAwait(false);
            stream.Group = null;
            stream.Ingest.LeaveReplicated();
            Configure(service, js, stream, config);
            if (!replay)
            {
                Answer(streams, account, js, stream, updated);
            }
            return;
        }
        Configure(service, js, stream, config);
        if (stream.Group is { } same)
        {
            same.Assignment = updated;
        }
        if (!replay && stream.Group is null or { IsActiveLeader: true })
        {
            Answer(streams, account, js, stream, updated);
        }
    }

    private static void Configure(JetStreamService service, JsAccount js, JsStream stream, StreamConfig config)
    {
        stream.UpdateConfig(config);
        js.PersistConfig(stream);
        service.Sourcing.Reattach(js, stream);
    }

    /// <summary>Go's clustered update answer: config, created, state and the cluster block, no domain.</summary>
    private static void Answer(ReplicatedStreams streams, Account account, JsAccount js, JsStream stream, StreamAssignment updated)
    {
        if (updated.Reply.Length == 0)
        {
            return;
        }
        var response = new StreamCreateResponse { Type = Prefix + "stream_update_response" };
        response.Fill(stream.Info());
        response.Domain = null;
        response.Cluster ??= new StreamClusterInfo { Name = streams.Meta.ClusterName, Leader = streams.Meta.Server.ServerName };
        streams.Respond(account, js, updated, response, JsJson.Context.StreamCreateResponse, null);
        streams.Service.Advisories.StreamAction(js, stream.Name, "modify");
    }
}
