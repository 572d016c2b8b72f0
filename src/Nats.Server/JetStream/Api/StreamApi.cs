using Microsoft.Extensions.Logging;
using Nats.Subjects;

namespace Nats.Server.JetStream.Api;

/// <summary>$JS.API.INFO and the STREAM.* requests (Go's jsAccountInfoRequest, jsStream*Request, standalone paths).</summary>
internal sealed class StreamApi(JetStreamService service)
{
    private const string Prefix = "io.nats.jetstream.api.v1.";
    private const int NamesLimit = 1024;
    private const int ListLimit = 256;
    private const int MaxSubjectDetails = 100_000;

    public void AccountInfo(ApiRequest request)
    {
        var response = new AccountInfoResponse { Type = Prefix + "account_info_response" };
        if (request.JsAccount is not { } js)
        {
            response.Error = JsErrors.NotEnabledForAccount;
            ApiRouter.Respond(service, request, response, JsJson.Context.AccountInfoResponse, response.Error);
            return;
        }
        response.Limits = js.Limits;
        response.Domain = string.IsNullOrEmpty(service.Options.Domain) ? null : service.Options.Domain;
        response.Api = new ApiStats { Total = js.ApiTotal, Errors = js.ApiErrors };
        if (service.Meta is { } meta)
        {
            // The meta leader counts every server's streams, gathered from their leaders.
            _ = Task.Run(() => Cluster.ClusteredListings.AccountInfoAsync(meta, service, request, response));
            return;
        }
        var (memory, storage) = js.Usage();
        response.Memory = memory;
        response.Storage = storage;
        response.Streams = js.Streams().Count;
        response.Consumers = js.Streams().Sum(s => s.Consumers.Count);
        // Go reads the totals before counting this request.
        ApiRouter.Respond(service, request, response, JsJson.Context.AccountInfoResponse, null);
    }

    public void Create(ApiRequest request, string name)
    {
        var response = new StreamCreateResponse { Type = Prefix + "stream_create_response" };
        var error = CreateCore(request, name, response);
        response.Error = error;
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamCreateResponse, error);
    }

    private JsApiError? CreateCore(ApiRequest request, string name, StreamCreateResponse response)
    {
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (!request.TryParse(JsJson.Context.StreamConfig, out var config) || config is null)
        {
            return JsErrors.InvalidJSON;
        }
        if (name != config.Name)
        {
            return JsErrors.StreamMismatch;
        }
        if (name.AsSpan().IndexOfAny("\\/") >= 0)
        {
            return JsErrors.StreamNameContainsPathSeparators;
        }
        if (config.Sealed)
        {
            return JsErrors.StreamInvalidConfigF.WithErr("stream configuration for create can not be sealed");
        }
        if (config.MirrorDirect && config.Mirror is null)
        {
            return JsErrors.StreamInvalidConfigF.WithErr("stream has no mirror but does have mirror direct");
        }
        if (js.Limits.TierNames is { } tiers && !tiers.Contains("R" + config.Replicas.ToString(System.Globalization.CultureInfo.InvariantCulture)))
        {
            // Go's jsNonClusteredStreamLimitsCheck: the tier of the config as sent.
            return JsErrors.NoLimits;
        }
        try
        {
            var (stream, created) = js.AddStream(config, clustered: service.Meta is not null);
            response.Fill(stream.Info());
            // Go's create answer fills only config, created and state.
            response.Domain = null;
            response.DidCreate = true;
            _ = created;
            if (created)
            {
                service.Advisories.StreamAction(js, stream.Name, "create");
            }
            return null;
        }
        catch (JsApiException e)
        {
            return e.Error.ErrCode == 0 ? JsErrors.StreamCreate.WithErr(e.Error.Description) : e.Error;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            service.Logger.LogWarning("Stream create failed for '{Account} > {Stream}': {Error}", request.Account.Name, name, e.Message);
            return JsErrors.StreamCreate.WithErr("error creating store for stream");
        }
    }

    public void Update(ApiRequest request, string name)
    {
        var response = new StreamCreateResponse { Type = Prefix + "stream_update_response" };
        response.Error = UpdateCore(request, name, response);
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamCreateResponse, response.Error);
    }

    private JsApiError? UpdateCore(ApiRequest request, string name, StreamCreateResponse response)
    {
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (!request.TryParse(JsJson.Context.StreamConfig, out var requested) || requested is null)
        {
            return JsErrors.InvalidJSON;
        }
        StreamConfig cfg;
        try
        {
            cfg = StreamConfigValidator.Check(requested, js, service.Options);
        }
        catch (JsApiException e)
        {
            return e.Error;
        }
        if (name != cfg.Name)
        {
            return JsErrors.StreamMismatch;
        }
        if (js.FindStream(name) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        try
        {
            var updated = StreamUpdate.Check(stream.Config, cfg);
            service.Resources.CheckStream(js, updated, stream.Config);
            if (js.SubjectsOverlap(updated.Subjects, stream))
            {
                return JsErrors.StreamSubjectOverlap;
            }
            stream.UpdateConfig(updated);
            js.PersistConfig(stream);
            service.Sourcing.Reattach(js, stream);
        }
        catch (JsApiException e)
        {
            return e.Error;
        }
        var info = stream.Info();
        response.Fill(info);
        service.Advisories.StreamAction(js, stream.Name, "modify");
        return null;
    }

    public void Delete(ApiRequest request, string name)
    {
        var response = new SuccessResponse { Type = Prefix + "stream_delete_response" };
        response.Error = DeleteCore(request, name);
        response.Success = response.Error is null;
        ApiRouter.Respond(service, request, response, JsJson.Context.SuccessResponse, response.Error);
    }

    private JsApiError? DeleteCore(ApiRequest request, string name)
    {
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (!request.IsEmpty)
        {
            return JsErrors.NotEmptyRequest;
        }
        if (js.FindStream(name) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        try
        {
            js.DeleteStream(stream);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return JsErrors.StreamDelete.WithErr(e.Message);
        }
        service.Advisories.StreamAction(js, name, "delete");
        return null;
    }

    /// <summary>Go's jsStreamLeaderStepDownRequest: the stream's leader hands leadership to another replica.</summary>
    public void LeaderStepDown(ApiRequest request, string name)
    {
        var response = new SuccessResponse { Type = Prefix + "stream_leader_stepdown_response" };
        if (request.JsAccount is not { } js)
        {
            response.Error = JsErrors.NotEnabledForAccount;
        }
        else if (service.Meta is null)
        {
            response.Error = JsErrors.ClusterRequired;
        }
        else if (js.FindStream(name)?.Group is not { } group)
        {
            response.Error = JsErrors.StreamNotFound;
        }
        else
        {
            _ = group.StepDownAsync().ContinueWith(stepped =>
            {
                response.Success = stepped.IsCompletedSuccessfully && stepped.Result;
                response.Error = response.Success ? null : JsErrors.ClusterNotLeader;
                ApiRouter.Respond(service, request, response, JsJson.Context.SuccessResponse, response.Error);
            }, TaskScheduler.Default);
            return;
        }
        ApiRouter.Respond(service, request, response, JsJson.Context.SuccessResponse, response.Error);
    }

    public void Info(ApiRequest request, string name)
    {
        var response = new StreamInfoResponse { Type = Prefix + "stream_info_response" };
        response.Error = InfoCore(request, name, response);
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamInfoResponse, response.Error);
    }

    private JsApiError? InfoCore(ApiRequest request, string name, StreamInfoResponse response)
    {
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        var body = new StreamInfoRequest();
        if (!request.IsEmpty && (!request.TryParse(JsJson.Context.StreamInfoRequest, out var parsed) || parsed is null))
        {
            return JsErrors.InvalidJSON;
        }
        else if (!request.IsEmpty)
        {
            request.TryParse(JsJson.Context.StreamInfoRequest, out parsed);
            body = parsed!;
        }
        if (js.FindStream(name) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        var info = stream.Info(body.DeletedDetails);
        if (!string.IsNullOrEmpty(body.SubjectsFilter))
        {
            var totals = stream.Store.SubjectsTotals(body.SubjectsFilter);
            if (totals.Count > 0)
            {
                var names = totals.Keys.Order(StringComparer.Ordinal).ToList();
                var offset = Math.Clamp(body.Offset, 0, names.Count);
                var end = Math.Min(offset + MaxSubjectDetails, names.Count);
                if (end > offset)
                {
                    info.State.Subjects = [];
                    foreach (var subject in names.Skip(offset).Take(end - offset))
                    {
                        info.State.Subjects[subject] = totals[subject];
                    }
                }
                response.Offset = offset;
                response.Limit = MaxSubjectDetails;
                response.Total = totals.Count;
            }
        }
        response.Fill(info);
        return null;
    }

    public void Names(ApiRequest request)
    {
        var response = new StreamNamesResponse { Type = Prefix + "stream_names_response" };
        if (request.JsAccount is not { } js)
        {
            response.Error = JsErrors.NotEnabledForAccount;
            ApiRouter.Respond(service, request, response, JsJson.Context.StreamNamesResponse, response.Error);
            return;
        }
        var body = new StreamNamesRequest();
        if (!request.IsEmpty)
        {
            if (!request.TryParse(JsJson.Context.StreamNamesRequest, out var parsed) || parsed is null)
            {
                response.Error = JsErrors.InvalidJSON;
                ApiRouter.Respond(service, request, response, JsJson.Context.StreamNamesResponse, response.Error);
                return;
            }
            body = parsed;
        }
        List<string> names = service.Meta is { } meta
            ? [.. Cluster.ClusteredListings.Filtered(meta, request.Account.Name, body.Subject).Select(a => a.Stream)]
            : [.. Filtered(js, body.Subject).Select(s => s.Name)];
        var offset = Math.Clamp(body.Offset, 0, names.Count);
        var page = names.Skip(offset).Take(NamesLimit).ToList();
        response.Streams = page.Count > 0 ? page : null;
        response.Total = names.Count;
        response.Limit = NamesLimit;
        response.Offset = offset;
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamNamesResponse, null);
    }

    public void List(ApiRequest request)
    {
        var response = new StreamListResponse { Type = Prefix + "stream_list_response" };
        if (request.JsAccount is not { } js)
        {
            response.Error = JsErrors.NotEnabledForAccount;
            ApiRouter.Respond(service, request, response, JsJson.Context.StreamListResponse, response.Error);
            return;
        }
        var body = new StreamNamesRequest();
        if (!request.IsEmpty)
        {
            if (!request.TryParse(JsJson.Context.StreamNamesRequest, out var parsed) || parsed is null)
            {
                response.Error = JsErrors.InvalidJSON;
                ApiRouter.Respond(service, request, response, JsJson.Context.StreamListResponse, response.Error);
                return;
            }
            body = parsed;
        }
        if (service.Meta is { } meta)
        {
            // The meta leader lists every server's streams, each info from its leader.
            _ = Task.Run(() => Cluster.ClusteredListings.ListAsync(meta, service, request, body.Subject, body.Offset, ListLimit, response));
            return;
        }
        var streams = Filtered(js, body.Subject);
        var offset = Math.Clamp(body.Offset, 0, streams.Count);
        // Go always answers a list (empty, not null) here.
        response.Streams = [.. streams.Skip(offset).Take(ListLimit).Select(s => s.Info())];
        response.Total = streams.Count;
        response.Limit = ListLimit;
        response.Offset = offset;
        ApiRouter.Respond(service, request, response, JsJson.Context.StreamListResponse, null);
    }

    private static List<JsStream> Filtered(JsAccount js, string? filter) =>
        string.IsNullOrEmpty(filter)
            ? js.Streams()
            : [.. js.Streams().Where(s => (s.Config.Subjects ?? []).Any(subject => SubjectRules.Collide(filter, subject)))];

    public void Purge(ApiRequest request, string name)
    {
        var response = new PurgeResponse { Type = Prefix + "stream_purge_response" };
        response.Error = PurgeCore(request, name, response, out var proposed);
        if (proposed)
        {
            // A replicated stream purges through its group: every replica at the same log position, the leader answers then.
            return;
        }
        ApiRouter.Respond(service, request, response, JsJson.Context.PurgeResponse, response.Error);
    }

    private static JsApiError? PurgeCore(ApiRequest request, string name, PurgeResponse response, out bool proposed)
    {
        proposed = false;
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        var body = new PurgeRequest();
        if (!request.IsEmpty)
        {
            if (!request.TryParse(JsJson.Context.PurgeRequest, out var parsed) || parsed is null)
            {
                return JsErrors.InvalidJSON;
            }
            if (parsed.Sequence > 0 && parsed.Keep > 0)
            {
                return JsErrors.BadRequest;
            }
            body = parsed;
        }
        if (js.FindStream(name) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        if (stream.Config.Sealed)
        {
            return JsErrors.StreamSealed;
        }
        if (stream.Config.DenyPurge)
        {
            return JsErrors.StreamPurgeFailedF.WithErr("stream purge not permitted");
        }
        if (stream.Group is { } group)
        {
            group.ProposePurge(request, body);
            proposed = true;
            return null;
        }
        response.Purged = stream.Purge(body.Subject ?? "", body.Sequence, body.Keep);
        response.Success = true;
        return null;
    }
}
