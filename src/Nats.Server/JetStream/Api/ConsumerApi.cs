using Nats.Server.JetStream.Consumers;

namespace Nats.Server.JetStream.Api;

/// <summary>The CONSUMER.* requests (Go's jsConsumer*Request, standalone paths) and CONSUMER.MSG.NEXT.</summary>
internal sealed class ConsumerApi(JetStreamService service)
{
    private const string Prefix = "io.nats.jetstream.api.v1.";
    private const int NamesLimit = 1024;
    private const int ListLimit = 256;

    /// <summary>CONSUMER.CREATE.&lt;stream&gt;[.&lt;consumer&gt;[.&lt;filter&gt;]] and CONSUMER.DURABLE.CREATE.&lt;stream&gt;.&lt;durable&gt;.</summary>
    public void Create(ApiRequest request, string[] tokens)
    {
        var type = Prefix + "consumer_create_response";
        var (consumer, info, error) = CreateCore(request, tokens, type);
        if (error is not null)
        {
            Fail(request, type, error);
            return;
        }
        ApiRouter.Respond(service, request, info!, ConsumerJson.Context.ConsumerInfo, null);
        consumer!.Run();
    }

    /// <summary>The create request's stream and config, checked against its subject as Go's jsConsumerCreateRequest does.</summary>
    internal static (string Stream, ConsumerConfig? Config, JsApiError? Error) ParseCreate(ApiRequest request, string[] tokens)
    {
        if (!request.TryParse(ConsumerJson.Context.CreateConsumerRequest, out var body) || body is null)
        {
            return ("", null, JsErrors.InvalidJSON);
        }
        var n = tokens.Length;
        string streamName, consumerName = "", filter = "";
        var legacyEphemeral = false;
        var legacyDurable = tokens[3] == "DURABLE";
        if (legacyDurable)
        {
            if (n != 7)
            {
                return ("", null, JsErrors.ConsumerDurableNameNotInSubject);
            }
            streamName = tokens[5];
            consumerName = tokens[6];
        }
        else if (n == 5)
        {
            legacyEphemeral = true;
            streamName = tokens[4];
        }
        else
        {
            streamName = tokens[4];
            consumerName = tokens[5];
            if (n > 7)
            {
                filter = string.Join('.', tokens[6..]);
            }
        }
        if (request.JsAccount is null)
        {
            return ("", null, JsErrors.NotEnabledForAccount);
        }
        if (streamName != (body.Stream ?? ""))
        {
            return ("", null, JsErrors.StreamMismatch);
        }
        if (consumerName.Length > 0 && consumerName.AsSpan().IndexOfAny("\\/") >= 0)
        {
            return ("", null, JsErrors.ConsumerNameContainsPathSeparators);
        }
        var config = body.Config;
        if (legacyDurable)
        {
            if (string.IsNullOrEmpty(config.Durable))
            {
                return ("", null, JsErrors.ConsumerDurableNameNotSet);
            }
            if (consumerName != config.Durable)
            {
                return ("", null, JsErrors.ConsumerDurableNameNotMatchSubject);
            }
        }
        else if (!legacyEphemeral)
        {
            if (!string.IsNullOrEmpty(config.Durable) && consumerName != config.Durable)
            {
                return ("", null, JsErrors.ConsumerDurableNameNotMatchSubject);
            }
            config.Name = consumerName;
        }
        if (legacyEphemeral && !string.IsNullOrEmpty(config.Durable))
        {
            return ("", null, JsErrors.ConsumerEphemeralWithDurableName);
        }
        if (filter.Length > 0 && config.FilterSubject != filter)
        {
            return ("", null, JsErrors.ConsumerCreateFilterSubjectMismatch);
        }
        return (streamName, config, null);
    }

    private (JsConsumer? Consumer, ConsumerInfo? Info, JsApiError? Error) CreateCore(ApiRequest request, string[] tokens, string type)
    {
        var (streamName, parsed, parseError) = ParseCreate(request, tokens);
        if (parseError is not null)
        {
            return (null, null, parseError);
        }
        var config = parsed!;
        var js = request.JsAccount!;
        if (config.Replicas > 1)
        {
            return (null, null, JsErrors.StreamReplicasNotSupported);
        }
        if (js.FindStream(streamName) is not { } stream)
        {
            return (null, null, JsErrors.StreamNotFound);
        }
        try
        {
            var consumer = stream.Consumers.Add(config);
            return (consumer, consumer.Info(type), null);
        }
        catch (JsApiException e)
        {
            return (null, null, e.Error.ErrCode == 0 ? JsErrors.ConsumerCreate.WithErr(e.Error.Description) : e.Error);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or Storage.StoreException)
        {
            return (null, null, JsErrors.ConsumerCreate.WithErr("error creating store for consumer"));
        }
    }

    public void Info(ApiRequest request, string streamName, string name)
    {
        var type = Prefix + "consumer_info_response";
        if (Lookup(request, streamName, name, out var consumer) is { } error)
        {
            Fail(request, type, error);
            return;
        }
        ApiRouter.Respond(service, request, consumer!.Info(type), ConsumerJson.Context.ConsumerInfo, null);
    }

    /// <summary>Go's jsConsumerLeaderStepDownRequest: the consumer's leader hands leadership to another replica.</summary>
    public void LeaderStepDown(ApiRequest request, string streamName, string name)
    {
        var response = new SuccessResponse { Type = Prefix + "consumer_leader_stepdown_response" };
        if (service.Meta is null)
        {
            response.Error = JsErrors.ClusterRequired;
        }
        else if (Lookup(request, streamName, name, out var consumer) is { } error)
        {
            response.Error = error;
        }
        else if (consumer!.Group is not { } group)
        {
            response.Error = JsErrors.ClusterNotLeader;
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

    public void Delete(ApiRequest request, string streamName, string name)
    {
        var response = new SuccessResponse { Type = Prefix + "consumer_delete_response" };
        if (Lookup(request, streamName, name, out var consumer) is { } error)
        {
            response.Error = error;
        }
        else
        {
            consumer!.Stream.Consumers.Delete(consumer, advisory: true);
            response.Success = true;
        }
        ApiRouter.Respond(service, request, response, JsJson.Context.SuccessResponse, response.Error);
    }

    public void Names(ApiRequest request, string streamName)
    {
        var response = new ConsumerNamesResponse { Type = Prefix + "consumer_names_response" };
        if (Paged(request, streamName, out var consumers, out var offset) is { } error)
        {
            response.Error = error;
            ApiRouter.Respond(service, request, response, ConsumerJson.Context.ConsumerNamesResponse, error);
            return;
        }
        var page = consumers.Skip(offset).Take(NamesLimit).Select(c => c.Name).ToList();
        response.Consumers = page;
        response.Total = consumers.Count;
        response.Offset = offset;
        response.Limit = NamesLimit;
        ApiRouter.Respond(service, request, response, ConsumerJson.Context.ConsumerNamesResponse, null);
    }

    public void List(ApiRequest request, string streamName)
    {
        var response = new ConsumerListResponse { Type = Prefix + "consumer_list_response" };
        if (Paged(request, streamName, out var consumers, out var offset) is { } error)
        {
            response.Error = error;
            ApiRouter.Respond(service, request, response, ConsumerJson.Context.ConsumerListResponse, error);
            return;
        }
        response.Consumers = [.. consumers.Skip(offset).Take(ListLimit).Select(c => c.Info())];
        response.Total = consumers.Count;
        response.Offset = offset;
        response.Limit = ListLimit;
        ApiRouter.Respond(service, request, response, ConsumerJson.Context.ConsumerListResponse, null);
    }

    /// <summary>CONSUMER.MSG.NEXT.&lt;stream&gt;.&lt;consumer&gt;: not an API call in Go's counters; unknown consumers get no answer.</summary>
    public void Next(ApiRequest request, string streamName, string name)
    {
        if (request.JsAccount?.FindStream(streamName)?.Consumers.Find(name) is { } consumer)
        {
            consumer.NextRequest(System.Text.Encoding.UTF8.GetString(request.Reply), request.Body);
        }
    }

    private JsApiError? Paged(ApiRequest request, string streamName, out List<JsConsumer> consumers, out int offset)
    {
        consumers = [];
        offset = 0;
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (!request.IsEmpty)
        {
            if (!request.TryParse(ConsumerJson.Context.ConsumerPagedRequest, out var paged) || paged is null)
            {
                return JsErrors.InvalidJSON;
            }
            offset = paged.Offset;
        }
        if (js.FindStream(streamName) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        consumers = [.. stream.Consumers.All.OrderBy(c => c.Name, StringComparer.Ordinal)];
        offset = Math.Clamp(offset, 0, consumers.Count);
        return null;
    }

    private static JsApiError? Lookup(ApiRequest request, string streamName, string name, out JsConsumer? consumer)
    {
        consumer = null;
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (js.FindStream(streamName) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        consumer = stream.Consumers.Find(name);
        return consumer is null ? JsErrors.ConsumerNotFound : null;
    }

    private void Fail(ApiRequest request, string type, JsApiError error) =>
        ApiRouter.Respond(service, request, new ConsumerErrorResponse { Type = type, Error = error }, ConsumerJson.Context.ConsumerErrorResponse, error);
}
