using System.Globalization;
using System.Text;
using Nats.Storage;

namespace Nats.Server.JetStream.Api;

/// <summary>STREAM.MSG.GET, STREAM.MSG.DELETE and DIRECT.GET (Go's jsMsgGetRequest, jsMsgDeleteRequest, getDirectRequest).</summary>
internal sealed class MessageApi(JetStreamService service)
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    public void Get(ApiRequest request, string name)
    {
        var response = new MsgGetResponse { Type = Prefix + "stream_msg_get_response" };
        response.Error = GetCore(request, name, response);
        if (response.Error is null)
        {
            // Go sends a found message with sendInternalAccountMsg, outside the API statistics.
            if (request.Reply.Length > 0)
            {
                var bytes = System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(response, JsJson.Context.MsgGetResponse);
                service.Transport.Publish(request.Account, request.Reply, default, default, bytes);
            }
            return;
        }
        ApiRouter.Respond(service, request, response, JsJson.Context.MsgGetResponse, response.Error);
    }

    private static JsApiError? GetCore(ApiRequest request, string name, MsgGetResponse response)
    {
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (request.IsEmpty)
        {
            return JsErrors.BadRequest;
        }
        if (!request.TryParse(JsJson.Context.MsgGetRequest, out var body) || body is null)
        {
            return JsErrors.InvalidJSON;
        }
        if ((body.Seq > 0 && !string.IsNullOrEmpty(body.LastFor))
            || (body.Seq == 0 && string.IsNullOrEmpty(body.LastFor) && string.IsNullOrEmpty(body.NextFor))
            || (!string.IsNullOrEmpty(body.LastFor) && !string.IsNullOrEmpty(body.NextFor)))
        {
            return JsErrors.BadRequest;
        }
        if (js.FindStream(name) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        if (Load(stream.Store, body) is not { } message)
        {
            return JsErrors.NoMessageFound;
        }
        response.Message = new StoredMsg
        {
            Subject = message.Subject,
            Sequence = message.Sequence,
            Header = message.Header.IsEmpty ? null : message.Header.ToArray(),
            Data = message.Data.IsEmpty ? null : message.Data.ToArray(),
            Time = new GoTime(message.Timestamp),
        };
        return null;
    }

    private static StoredMessage? Load(IStreamStore store, MsgGetRequest body)
    {
        if (body.Seq > 0 && string.IsNullOrEmpty(body.NextFor))
        {
            return store.LoadMsg(body.Seq);
        }
        if (!string.IsNullOrEmpty(body.NextFor))
        {
            return store.LoadNextMsg(body.NextFor, body.Seq);
        }
        return store.LoadLastMsg(body.LastFor!);
    }

    public void Delete(ApiRequest request, string name)
    {
        var error = DeleteCore(request, name, out var proposed);
        if (!proposed)
        {
            // A replicated stream deletes through its group instead: every replica at the same log position, the leader answers then.
            AnswerDelete(service, request, error);
        }
    }

    private static JsApiError? DeleteCore(ApiRequest request, string name, out bool proposed)
    {
        proposed = false;
        if (request.JsAccount is not { } js)
        {
            return JsErrors.NotEnabledForAccount;
        }
        if (request.IsEmpty)
        {
            return JsErrors.BadRequest;
        }
        if (!request.TryParse(JsJson.Context.MsgDeleteRequest, out var body) || body is null)
        {
            return JsErrors.InvalidJSON;
        }
        if (js.FindStream(name) is not { } stream)
        {
            return JsErrors.StreamNotFound;
        }
        if (stream.Config.Sealed)
        {
            return JsErrors.StreamSealed;
        }
        if (stream.Config.DenyDelete)
        {
            return JsErrors.StreamMsgDeleteFailedF.WithErr("message delete not permitted");
        }
        if (stream.Group is { } group)
        {
            group.ProposeMsgDelete(request, body.Seq, body.NoErase);
            proposed = true;
            return null;
        }
        return RemoveMsg(stream, body.Seq, body.NoErase);
    }

    /// <summary>Removes (or erases) one message; the error Go answers when that fails, null when removed.</summary>
    public static JsApiError? RemoveMsg(JsStream stream, ulong seq, bool noErase)
    {
        bool removed;
        try
        {
            removed = stream.RemoveMsg(seq, erase: !noErase);
        }
        catch (StoreException e)
        {
            return JsErrors.StreamMsgDeleteFailedF.WithErr(e.Message);
        }
        if (removed)
        {
            return null;
        }
        // Go's file store reports a missing message as an error, its memory store as "not removed".
        return stream.Store.Type == StorageType.File
            ? JsErrors.StreamMsgDeleteFailedF.WithErr(seq > stream.Store.State().LastSeq ? "stream store EOF" : "no message found")
            : JsErrors.SequenceNotFound.With("seq", seq);
    }

    /// <summary>Answers a message delete: Go counts a failed removal, but not as an API error.</summary>
    public static void AnswerDelete(JetStreamService service, ApiRequest request, JsApiError? error)
    {
        var response = new SuccessResponse { Type = Prefix + "stream_msg_delete_response", Error = error, Success = error is null };
        ApiRouter.Respond(service, request, response, JsJson.Context.SuccessResponse, error is { ErrCode: 10057 or 10043 } ? null : error);
    }

    /// <summary>
    /// Direct get: answered only for streams with allow_direct (Go subscribes only then), as the raw
    /// message with Nats-Stream/Subject/Sequence/Time-Stamp headers, or a status-only reply.
    /// </summary>
    public void DirectGet(ApiRequest request, string name, string? lastBySubject)
    {
        if (request.JsAccount?.FindStream(name) is not { } stream || !(stream.Config.AllowDirect || stream.Config.MirrorDirect))
        {
            return;
        }
        MsgGetRequest body;
        if (lastBySubject is not null)
        {
            body = new MsgGetRequest { LastFor = lastBySubject };
        }
        else
        {
            if (request.Body.Length == 0)
            {
                Status(request, "408 Empty Request");
                return;
            }
            if (!request.TryParse(JsJson.Context.MsgGetRequest, out var parsed) || parsed is null)
            {
                Status(request, "408 Malformed Request");
                return;
            }
            body = parsed;
            if (body.Seq == 0 && string.IsNullOrEmpty(body.LastFor) && string.IsNullOrEmpty(body.NextFor))
            {
                Status(request, "408 Empty Request");
                return;
            }
            if ((body.Seq > 0 && !string.IsNullOrEmpty(body.LastFor)) || (!string.IsNullOrEmpty(body.LastFor) && !string.IsNullOrEmpty(body.NextFor)))
            {
                Status(request, "408 Bad Request");
                return;
            }
        }
        if (Load(stream.Store, body) is not { } message)
        {
            Status(request, "404 Message Not Found");
            return;
        }
        var time = new GoTime(message.Timestamp).ToString();
        var seq = message.Sequence.ToString(CultureInfo.InvariantCulture);
        byte[] header;
        if (message.Header.IsEmpty)
        {
            header = Encoding.UTF8.GetBytes($"NATS/1.0\r\nNats-Stream: {stream.Name}\r\nNats-Subject: {message.Subject}\r\nNats-Sequence: {seq}\r\nNats-Time-Stamp: {time}\r\n\r\n");
        }
        else
        {
            var text = Encoding.UTF8.GetString(message.Header.Span);
            var end = text.EndsWith("\r\n\r\n", StringComparison.Ordinal) ? text.Length - 2 : text.Length;
            header = Encoding.UTF8.GetBytes(text[..end]
                + $"Nats-Stream: {stream.Name}\r\nNats-Subject: {message.Subject}\r\nNats-Sequence: {seq}\r\nNats-Time-Stamp: {time}\r\n\r\n");
        }
        service.Transport.Publish(request.Account, request.Reply, default, header, message.Data.Span);
    }

    private void Status(ApiRequest request, string status) =>
        service.Transport.Publish(request.Account, request.Reply, default, Encoding.ASCII.GetBytes($"NATS/1.0 {status}\r\n\r\n"), default);
}
