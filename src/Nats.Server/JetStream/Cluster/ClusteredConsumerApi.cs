using System.Text;
using System.Text.Json;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Consumer requests in a cluster, as Go's jsClusteredConsumerRequest: a consumer of a replicated stream is created
/// (or updated) and deleted through the meta group, whose leader checks the request and proposes the assignment;
/// the consumer's leader answers a create, the meta leader a delete. An ephemeral is R1 on a limits stream unless it
/// asks for replicas (Go's rule), replicated with the stream on an interest or work-queue stream.
/// </summary>
internal static class ClusteredConsumerApi
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    /// <summary>False when this server creates the consumer itself (not a replicated durable, and this server answers
    /// for the stream); true when handled here or left to another server.</summary>
    public static bool TryCreate(MetaGroup meta, JetStreamService service, ApiRequest request, string[] tokens)
    {
        var streamName = tokens[3] == "DURABLE" ? (tokens.Length > 5 ? tokens[5] : "") : tokens[4];
        var (_, config, parseError) = ConsumerApi.ParseCreate(request, tokens);
        if (meta.Assigned(request.Account.Name, streamName) is not { Replicated: true } stream || parseError is not null || config is null)
        {
            return !ClusteredApi.ShouldHandle(meta, request, tokens);
        }
        if (!meta.IsLeader)
        {
            return true;
        }
        var name = config.IsDurable ? config.Durable! : config.Name is { Length: > 0 } given ? given : NewName(meta, request.Account.Name, streamName);
        JsApiError? error = null;
        var existing = meta.AssignedConsumer(request.Account.Name, streamName, name);
        var streamConfig = JsonSerializer.Deserialize(stream.Config, JsJson.Context.StreamConfig);
        if (request.JsAccount is not { } js)
        {
            error = JsErrors.NotEnabledForAccount;
        }
        else if (streamConfig is null)
        {
            error = JsErrors.StreamNotFound;
        }
        else if (config.Replicas > Math.Max(1, streamConfig.Replicas))
        {
            error = JsErrors.ConsumerReplicasExceedsStream;
        }
        else if (name.AsSpan().IndexOfAny(" \t\r\n\f.*>") >= 0)
        {
            error = JsErrors.ConsumerBadDurableName;
        }
        else
        {
            ConsumerConfigCheck.SetDefaults(config, js.Limits);
            error = ConsumerConfigCheck.Check(config, streamConfig, js.Limits);
            if (error is null && existing is not null)
            {
                try
                {
                    StreamConsumers.CheckUpdate(existing.Config, config, js);
                }
                catch (JsApiException e)
                {
                    error = e.Error.ErrCode == 0 ? JsErrors.ConsumerCreate.WithErr(e.Error.Description) : e.Error;
                }
            }
        }
        if (error is not null)
        {
            ApiRouter.Respond(service, request, new ConsumerErrorResponse { Type = Prefix + "consumer_create_response", Error = error },
                ConsumerJson.Context.ConsumerErrorResponse, error);
            return true;
        }
        if (!config.IsDurable)
        {
            config.Name = name;
            // Go's updateInactiveThreshold: an ephemeral goes away after 5 s without interest unless it says otherwise.
            if (config.InactiveThreshold == 0)
            {
                config.InactiveThreshold = ConsumerConfigCheck.DefaultInactiveThreshold;
            }
        }
        var peers = existing?.Peers ?? Peers(meta, request.Account.Name, stream, streamConfig!, config);
        var group = existing?.Group ?? ConsumerAssignment.GroupName(request.Account.Name, streamName, name, peers.Count,
            streamConfig!.Storage == StorageKind.Memory || config.MemoryStorage);
        var assignment = new ConsumerAssignment(request.Account.Name, streamName, name, existing?.Created ?? GoTime.Now(), config,
            peers, group, request.Subject, Encoding.UTF8.GetString(request.Reply));
        meta.Propose(ConsumerAssignment.Op, assignment.Encode());
        return true;
    }

    /// <summary>
    /// Go's createGroupForConsumer and its ephemeral rule: an ephemeral asking for fewer replicas than the stream has gets
    /// that many of its members at random, and one of a limits stream asking for at most one is R1 on the stream's leader,
    /// which holds every acknowledged message (Go picks a member at random, maybe a lagging one); anything else is
    /// replicated on the stream's members. Durables keep the stream's members (their own num_replicas is not used yet).
    /// </summary>
    private static IReadOnlyList<string> Peers(MetaGroup meta, string account, StreamAssignment stream, StreamConfig streamConfig, ConsumerConfig config)
    {
        if (config.IsDurable)
        {
            return stream.Peers;
        }
        if (streamConfig.Retention == RetentionPolicy.Limits && config.Replicas <= 1)
        {
            if (meta.Replicated?.Find(account, stream.Stream)?.Status.Leader is { } leader && stream.Peers.Contains(leader))
            {
                return [leader];
            }
            return [stream.Peers[Random.Shared.Next(stream.Peers.Count)]];
        }
        if (config.Replicas > 0 && config.Replicas < stream.Peers.Count)
        {
            return [.. stream.Peers.OrderBy(_ => Random.Shared.Next()).Take(config.Replicas)];
        }
        return stream.Peers;
    }

    /// <summary>Go's createConsumerName, unique among the stream's assigned consumers.</summary>
    private static string NewName(MetaGroup meta, string account, string stream)
    {
        string name;
        do
        {
            name = StreamConsumers.RandomName();
        }
        while (meta.AssignedConsumer(account, stream, name) is not null);
        return name;
    }

    /// <summary>A replicated consumer's delete: the meta leader proposes its removal and answers once applied. False for other consumers.</summary>
    public static bool TryDelete(MetaGroup meta, ApiRequest request, string stream, string name)
    {
        if (meta.AssignedConsumer(request.Account.Name, stream, name) is not { } assignment)
        {
            return false;
        }
        if (meta.IsLeader)
        {
            var removal = assignment with { Subject = request.Subject, Reply = Encoding.UTF8.GetString(request.Reply) };
            meta.Propose(ConsumerAssignment.RemoveOp, removal.Encode());
        }
        return true;
    }
}
