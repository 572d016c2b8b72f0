using System.Text;
using System.Text.Json;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Consumer requests in a cluster, as Go's jsClusteredConsumerRequest: a durable consumer of a replicated stream is
/// created (or updated) and deleted through the meta group, whose leader checks the request and proposes the
/// assignment; the consumer's group leader answers a create, the meta leader a delete. Ephemeral consumers stay
/// on the stream's leader, unreplicated.
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
        if (meta.Assigned(request.Account.Name, streamName) is not { Replicated: true } stream || parseError is not null || config is not { IsDurable: true })
        {
            return !ClusteredApi.ShouldHandle(meta, request, tokens);
        }
        if (!meta.IsLeader)
        {
            return true;
        }
        var name = config.Durable!;
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
        var group = existing?.Group ?? ConsumerAssignment.GroupName(request.Account.Name, streamName, name, stream.Peers.Count,
            streamConfig!.Storage == StorageKind.Memory);
        var assignment = new ConsumerAssignment(request.Account.Name, streamName, name, existing?.Created ?? GoTime.Now(), config,
            existing?.Peers ?? stream.Peers, group, request.Subject, Encoding.UTF8.GetString(request.Reply));
        meta.Propose(ConsumerAssignment.Op, assignment.Encode());
        return true;
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
