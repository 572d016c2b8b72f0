using System.Text;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// STREAM.PURGE and STREAM.MSG.DELETE of a replicated stream, as Go's purgeStreamOp and deleteMsgOp: the leader
/// proposes the request to the stream's group (<see cref="Entry(ApiRequest, PurgeRequest, string, ulong)"/>), every
/// replica applies it at the same log position, and the leader answers the client once it has applied it.
/// </summary>
internal static class StreamAdminOps
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    public static byte[] Entry(ApiRequest request, PurgeRequest body, string stream, ulong lastSeq) => ClusterJson.Entry(StreamPurgeOp.Op,
        new StreamPurgeOp
        {
            Client = new ClientRef { Account = request.Account.Name },
            Stream = stream,
            LastSeq = lastSeq,
            Subject = request.Subject,
            Reply = Encoding.UTF8.GetString(request.Reply),
            Request = body is { Sequence: 0, Keep: 0, Subject: null or "" } ? null
                : new PurgeOpRequest { Filter = body.Subject, Sequence = body.Sequence, Keep = body.Keep },
        }, ClusterJson.Context.StreamPurgeOp);

    public static byte[] Entry(ApiRequest request, string stream, ulong seq, bool noErase) => ClusterJson.Entry(StreamMsgDeleteOp.Op,
        new StreamMsgDeleteOp
        {
            Client = new ClientRef { Account = request.Account.Name },
            Stream = stream,
            Seq = seq,
            NoErase = noErase,
            Subject = request.Subject,
            Reply = Encoding.UTF8.GetString(request.Reply),
        }, ClusterJson.Context.StreamMsgDeleteOp);

    /// <summary>
    /// Applies a purge entry; returns the leader's answer to send after the apply round, or null. A store already past
    /// the entry's last sequence applied it before a restart (the log is replayed): only a full purge is made sure of.
    /// </summary>
    public static Action? ApplyPurge(JsStream stream, ReadOnlySpan<byte> json, bool answer, Func<ulong, bool> catchUp)
    {
        if (ClusterJson.Decode(json, ClusterJson.Context.StreamPurgeOp) is not { } op)
        {
            return null;
        }
        if (op.LastSeq > stream.Store.State().LastSeq)
        {
            // A replica behind the log's start: what the purge is about comes first.
            catchUp(op.LastSeq);
        }
        var request = op.Request ?? new PurgeOpRequest();
        var full = string.IsNullOrEmpty(request.Filter) && request.Sequence == 0 && request.Keep == 0;
        var state = stream.Store.State();
        if (state.LastSeq > op.LastSeq)
        {
            if (full && state.FirstSeq <= op.LastSeq)
            {
                lock (stream.Gate)
                {
                    stream.Store.Compact(op.LastSeq + 1);
                }
            }
            return null;
        }
        var purged = stream.Purge(request.Filter ?? "", request.Sequence, request.Keep);
        if (!answer || op.Reply.Length == 0)
        {
            return null;
        }
        return () =>
        {
            var response = new PurgeResponse { Type = Prefix + "stream_purge_response", Success = true, Purged = purged };
            ApiRouter.Respond(stream.Account.Service, RequestOf(stream, op.Subject, op.Reply), response, JsJson.Context.PurgeResponse, null);
        };
    }

    /// <summary>Applies a message delete entry; returns the leader's answer to send after the apply round, or null.</summary>
    public static Action? ApplyMsgDelete(JsStream stream, ReadOnlySpan<byte> json, bool answer)
    {
        if (ClusterJson.Decode(json, ClusterJson.Context.StreamMsgDeleteOp) is not { } op)
        {
            return null;
        }
        var error = MessageApi.RemoveMsg(stream, op.Seq, op.NoErase);
        if (!answer || op.Reply.Length == 0)
        {
            return null;
        }
        return () => MessageApi.AnswerDelete(stream.Account.Service, RequestOf(stream, op.Subject, op.Reply), error);
    }

    private static ApiRequest RequestOf(JsStream stream, string subject, string reply) => new()
    {
        JsAccount = stream.Account,
        Account = stream.Account.Account,
        Subject = subject,
        Reply = Encoding.UTF8.GetBytes(reply),
        Body = [],
    };
}
