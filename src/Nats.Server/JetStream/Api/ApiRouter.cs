using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Subjects;

namespace Nats.Server.JetStream.Api;

/// <summary>
/// Receives everything on <c>$JS.API.&gt;</c> (and <c>$JS.&lt;domain&gt;.API.&gt;</c>) in an account and
/// hands it to the handler for its subject, as Go's apiDispatch does. Unknown subjects get no answer
/// (Go's requester times out too).
/// </summary>
internal sealed class ApiRouter(JetStreamService service)
{
    private readonly StreamApi _streams = new(service);
    private readonly MessageApi _messages = new(service);
    private readonly ConsumerApi _consumers = new(service);

    public void OnRequest(Clients.ClientConnection? origin, Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        var text = Encoding.UTF8.GetString(subject);
        if (!text.StartsWith("$JS.API.", StringComparison.Ordinal))
        {
            // $JS.<domain>.API.x → $JS.API.x
            var apiAt = text.IndexOf(".API.", 4, StringComparison.Ordinal);
            if (apiAt < 0)
            {
                return;
            }
            text = "$JS.API." + text[(apiAt + 5)..];
        }
        var request = new ApiRequest
        {
            JsAccount = service.FindAccount(account),
            Account = account,
            Subject = text,
            Reply = reply.ToArray(),
            Body = payload.ToArray(),
            Origin = origin,
            RawSubject = Encoding.UTF8.GetString(subject),
        };
        // Go handles a request without a reply too (it is audited, and a create still creates); only a
        // pull request needs somewhere to deliver.
        if (request.Reply.Length == 0 && (text.StartsWith("$JS.API.CONSUMER.MSG.NEXT.", StringComparison.Ordinal)
            || text.StartsWith("$JS.API.DIRECT.GET.", StringComparison.Ordinal)))
        {
            return;
        }
        try
        {
            Dispatch(request);
        }
        catch (Exception e)
        {
            service.Logger.LogError(e, "JetStream API request {Subject} failed", text);
        }
    }

    /// <summary>A stream the meta group placed on this server: created as if the client had asked here.</summary>
    public void CreateAssigned(Account account, string subject, byte[] reply, byte[] config, string name)
    {
        var request = new ApiRequest
        {
            JsAccount = service.FindAccount(account),
            Account = account,
            Subject = subject,
            Reply = reply,
            Body = config,
        };
        try
        {
            _streams.Create(request, name);
        }
        catch (Exception e)
        {
            service.Logger.LogError(e, "JetStream assigned stream {Stream} could not be created", name);
        }
    }

    private void Dispatch(ApiRequest request)
    {
        var tokens = SubjectTokens.Split(request.Subject);
        // tokens: $JS API <kind> ...
        var kind = tokens.Length > 2 ? tokens[2] : "";
        if (service.Meta is { } meta)
        {
            if (kind == "STREAM" && tokens.Length == 5 && tokens[3] == "CREATE")
            {
                if (Cluster.ClusteredApi.TryCreate(meta, service, request, tokens[4]))
                {
                    return;
                }
            }
            else if (kind == "STREAM" && tokens.Length == 5 && tokens[3] == "DELETE" && Cluster.ClusteredApi.TryDelete(meta, request, tokens[4]))
            {
                return;
            }
            else if (kind == "STREAM" && tokens.Length == 5 && tokens[3] == "UPDATE" && Cluster.ClusteredStreamUpdate.TryUpdate(meta, service, request, tokens[4]))
            {
                return;
            }
            else if (kind == "CONSUMER" && tokens.Length >= 5 && tokens[3] is "CREATE" or "DURABLE")
            {
                if (Cluster.ClusteredConsumerApi.TryCreate(meta, service, request, tokens))
                {
                    return;
                }
            }
            else if (kind == "CONSUMER" && tokens.Length == 6 && tokens[3] == "DELETE" && Cluster.ClusteredConsumerApi.TryDelete(meta, request, tokens[4], tokens[5]))
            {
                return;
            }
            else if (!Cluster.ClusteredApi.ShouldHandle(meta, request, tokens))
            {
                return;
            }
        }
        switch (kind)
        {
            case "INFO" when tokens.Length == 3:
                _streams.AccountInfo(request);
                return;
            case "STREAM" when tokens.Length >= 4:
                switch (tokens[3])
                {
                    case "CREATE" when tokens.Length == 5:
                        _streams.Create(request, tokens[4]);
                        return;
                    case "UPDATE" when tokens.Length == 5:
                        _streams.Update(request, tokens[4]);
                        return;
                    case "DELETE" when tokens.Length == 5:
                        _streams.Delete(request, tokens[4]);
                        return;
                    case "INFO" when tokens.Length == 5:
                        _streams.Info(request, tokens[4]);
                        return;
                    case "NAMES" when tokens.Length == 4:
                        _streams.Names(request);
                        return;
                    case "LIST" when tokens.Length == 4:
                        _streams.List(request);
                        return;
                    case "PURGE" when tokens.Length == 5:
                        _streams.Purge(request, tokens[4]);
                        return;
                    case "LEADER" when tokens.Length == 6 && tokens[4] == "STEPDOWN":
                        _streams.LeaderStepDown(request, tokens[5]);
                        return;
                    case "MSG" when tokens.Length == 6 && tokens[4] == "GET":
                        _messages.Get(request, tokens[5]);
                        return;
                    case "MSG" when tokens.Length == 6 && tokens[4] == "DELETE":
                        _messages.Delete(request, tokens[5]);
                        return;
                }
                break;
            case "CONSUMER" when tokens.Length >= 5:
                DispatchConsumer(request, tokens);
                return;
            case "DIRECT" when tokens.Length >= 5 && tokens[3] == "GET":
                _messages.DirectGet(request, tokens[4], tokens.Length > 5 ? string.Join('.', tokens[5..]) : null);
                return;
        }
    }

    private void DispatchConsumer(ApiRequest request, string[] tokens)
    {
        switch (tokens[3])
        {
            case "CREATE" when tokens.Length >= 5:
            case "DURABLE" when tokens.Length >= 6 && tokens[4] == "CREATE":
                _consumers.Create(request, tokens);
                return;
            case "INFO" when tokens.Length == 6:
                _consumers.Info(request, tokens[4], tokens[5]);
                return;
            case "DELETE" when tokens.Length == 6:
                _consumers.Delete(request, tokens[4], tokens[5]);
                return;
            case "NAMES" when tokens.Length == 5:
                _consumers.Names(request, tokens[4]);
                return;
            case "LIST" when tokens.Length == 5:
                _consumers.List(request, tokens[4]);
                return;
            case "LEADER" when tokens.Length == 7 && tokens[4] == "STEPDOWN":
                _consumers.LeaderStepDown(request, tokens[5], tokens[6]);
                return;
            case "MSG" when tokens.Length == 7 && tokens[4] == "NEXT":
                _consumers.Next(request, tokens[5], tokens[6]);
                return;
        }
    }

    /// <summary>Sends a JSON answer and counts it in the account's API statistics.</summary>
    public static void Respond<T>(JetStreamService service, ApiRequest request, T response, JsonTypeInfo<T> type, JsApiError? error)
    {
        request.JsAccount?.CountApi(error is not null);
        var bytes = JsonSerializer.SerializeToUtf8Bytes(response, type);
        if (request.Reply.Length > 0)
        {
            service.Transport.Publish(request.Account, request.Reply, default, default, bytes);
        }
        ApiAudit.Send(service, request, bytes);
    }
}
