using System.Text.Json;
using Nats.Server.JetStream.Api;
using Nats.Subjects;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Account-wide answers of the meta leader in a cluster, from the meta group's assignments rather than its own streams
/// (Go's clustered jsStreamNamesRequest, jsClusteredStreamListRequest and JetStreamUsage): names from the
/// assignments, infos gathered from each stream's leader (<see cref="StreamInfoGather"/>).
/// </summary>
internal static class ClusteredListings
{
    /// <summary>Go waits 4 s for the stream infos of a list.</summary>
    private static readonly TimeSpan GatherTimeout = TimeSpan.FromSeconds(4);

    /// <summary>The account's assigned streams a names/list filter matches, by name (Go: a stream without subjects by its name).</summary>
    public static List<StreamAssignment> Filtered(MetaGroup meta, string account, string? filter)
    {
        var all = meta.StreamsOf(account);
        if (string.IsNullOrEmpty(filter))
        {
            return all;
        }
        return [.. all.Where(a => SubjectsOf(a) is { Count: > 0 } subjects
            ? subjects.Any(s => SubjectRules.Collide(filter, s))
            : SubjectRules.Collide(filter, a.Stream))];
    }

    internal static List<string> SubjectsOf(StreamAssignment assignment)
    {
        try
        {
            return JsonSerializer.Deserialize(assignment.Config, JsJson.Context.StreamConfig)?.Subjects ?? [];
        }
        catch (JsonException)
        {
            return [];
        }
    }

    /// <summary>A page of the account's streams, each info from its leader; streams that did not answer are <c>missing</c>.</summary>
    public static async Task ListAsync(MetaGroup meta, JetStreamService service, ApiRequest request, string? filter, int offset, int limit,
        StreamListResponse response)
    {
        var streams = Filtered(meta, request.Account.Name, filter);
        offset = Math.Clamp(offset, 0, streams.Count);
        var page = streams.Skip(offset).Take(limit).ToList();
        response.Limit = limit;
        response.Offset = offset;
        response.Streams = [];
        if (page.Count > 0 && meta.Gather is { } gather)
        {
            var infos = await gather.GatherAsync(request.Account.Name, [.. page.Select(a => a.Stream)], GatherTimeout).ConfigureAwait(false);
            response.Streams = infos;
            var missing = page.Select(a => a.Stream).Except(infos.Select(i => i.Config.Name)).ToList();
            response.Missing = missing.Count > 0 ? missing : null;
            // Go leaves the total out of an empty page's answer.
            response.Total = streams.Count;
        }
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamListResponse, null);
    }

    /// <summary>
    /// Go's JetStreamUsage in a cluster: streams and consumers counted from every stream's info, memory and storage
    /// summed over every replica (a stream's bytes times its replicas), as Go adds up what each server reports.
    /// </summary>
    public static async Task AccountInfoAsync(MetaGroup meta, JetStreamService service, ApiRequest request, AccountInfoResponse response)
    {
        var streams = meta.StreamsOf(request.Account.Name);
        var infos = meta.Gather is { } gather && streams.Count > 0
            ? await gather.GatherAsync(request.Account.Name, [.. streams.Select(a => a.Stream)], GatherTimeout).ConfigureAwait(false)
            : [];
        ulong memory = 0, storage = 0;
        var consumers = 0;
        foreach (var info in infos)
        {
            var bytes = info.State.Bytes * (ulong)Math.Max(1, info.Config.Replicas);
            if (info.Config.Storage == StorageKind.Memory)
            {
                memory += bytes;
            }
            else
            {
                storage += bytes;
            }
            consumers += info.State.Consumers;
        }
        response.Memory = memory;
        response.Storage = storage;
        response.Streams = streams.Count;
        response.Consumers = consumers;
        ApiRouter.Respond(service, request, response, JsJson.Context.AccountInfoResponse, null);
    }
}
