using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// The replicated streams placed on this server: a stream assigned here gets its replica (created, or recovered
/// from disk) and its group; a removal stops the group and deletes both. The meta group applies assignments on
/// its RAFT loop; the work (file I/O, answers) runs here, one assignment after the other, in log order.
/// </summary>
internal sealed class ReplicatedStreams(MetaGroup meta, JetStreamService service, Account system, ILogger logger) : IAsyncDisposable
{
    private const string Prefix = "io.nats.jetstream.api.v1.";

    private readonly Dictionary<(string Account, string Stream), StreamGroup> _groups = [];
    private readonly Lock _queue = new();
    private Task _tail = Task.CompletedTask;
    private bool _disposed;

    public void Assign(StreamAssignment assignment, bool replay) => Enqueue(() =>
    {
        AssignCore(assignment, replay);
        return Task.CompletedTask;
    });

    /// <param name="answer">Whether this server (the meta leader) answers the delete request.</param>
    public void Remove(StreamAssignment assignment, bool answer) => Enqueue(() => RemoveCoreAsync(assignment, answer));

    /// <summary>The group of a replicated stream this server holds a replica of, or null.</summary>
    public StreamGroup? Find(string account, string stream)
    {
        lock (_groups)
        {
            return _groups.GetValueOrDefault((account, stream));
        }
    }

    private void Enqueue(Func<Task> work)
    {
        lock (_queue)
        {
            if (_disposed)
            {
                return;
            }
            _tail = _tail.ContinueWith(async _ =>
            {
                try
                {
                    await work().ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    logger.LogError(e, "JetStream cluster stream assignment failed");
                }
            }, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default).Unwrap();
        }
    }

    private void AssignCore(StreamAssignment assignment, bool replay)
    {
        if (meta.Server.FindAccount(assignment.Account) is not { } account || service.FindAccount(account) is not { } js)
        {
            return;
        }
        var stream = js.FindStream(assignment.Stream);
        var fresh = false;
        if (stream is null)
        {
            try
            {
                var config = JsonSerializer.Deserialize(assignment.Config, JsJson.Context.StreamConfig)
                    ?? throw new JsApiException(JsErrors.InvalidJSON);
                (stream, _) = js.AddStream(config, clustered: true);
                fresh = true;
            }
            catch (Exception e) when (e is JsApiException or JsonException or IOException or UnauthorizedAccessException)
            {
                logger.LogWarning("JetStream cluster could not create stream '{Account} > {Stream}': {Error}", assignment.Account, assignment.Stream, e.Message);
                if (!replay && assignment.Peer == meta.PeerId)
                {
                    var error = e is JsApiException api ? api.Error : JsErrors.StreamCreate.WithErr(e.Message);
                    Respond(account, js, assignment, new StreamCreateResponse { Type = Prefix + "stream_create_response", Error = error },
                        JsJson.Context.StreamCreateResponse, error);
                }
                return;
            }
        }
        if (stream.Group is not null)
        {
            return;
        }
        var group = new StreamGroup(meta, stream, assignment, logger);
        stream.Group = group;
        lock (_groups)
        {
            _groups[(assignment.Account, assignment.Stream)] = group;
        }
        Action<StreamGroup>? answer = fresh && !replay && assignment.Reply.Length > 0
            ? _ => Task.Run(() => AnswerCreate(account, js, stream, assignment))
            : null;
        group.Start(meta.StoreDirectory, system, campaign: fresh && assignment.Peer == meta.PeerId, answer);
    }

    private void AnswerCreate(Account account, JsAccount js, JsStream stream, StreamAssignment assignment)
    {
        var response = new StreamCreateResponse { Type = Prefix + "stream_create_response" };
        response.Fill(stream.Info());
        // Go's create answer has no domain.
        response.Domain = null;
        response.DidCreate = true;
        Respond(account, js, assignment, response, JsJson.Context.StreamCreateResponse, null);
        service.Advisories.StreamAction(js, stream.Name, "create");
    }

    private async Task RemoveCoreAsync(StreamAssignment assignment, bool answer)
    {
        StreamGroup? group;
        lock (_groups)
        {
            _groups.Remove((assignment.Account, assignment.Stream), out group);
        }
        if (group is not null)
        {
            await group.DisposeAsync().ConfigureAwait(false);
            group.DeleteLog();
        }
        if (meta.Server.FindAccount(assignment.Account) is not { } account || service.FindAccount(account) is not { } js)
        {
            return;
        }
        if (js.FindStream(assignment.Stream) is { } stream && (group is null || ReferenceEquals(stream.Group, group)))
        {
            js.DeleteStream(stream);
        }
        if (answer)
        {
            service.Advisories.StreamAction(js, assignment.Stream, "delete");
            var response = new SuccessResponse { Type = Prefix + "stream_delete_response", Success = true };
            Respond(account, js, assignment, response, JsJson.Context.SuccessResponse, null);
        }
    }

    private void Respond<T>(Account account, JsAccount js, StreamAssignment assignment, T response,
        System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type, JsApiError? error)
    {
        if (assignment.Reply.Length == 0)
        {
            return;
        }
        var request = new ApiRequest
        {
            JsAccount = js,
            Account = account,
            Subject = assignment.Subject,
            Reply = Encoding.UTF8.GetBytes(assignment.Reply),
            Body = assignment.Config,
        };
        ApiRouter.Respond(service, request, response, type, error);
    }

    /// <summary>Every group this server leads hands over to another member (a clean shutdown), all at once.</summary>
    public Task HandOverAsync(TimeSpan timeout)
    {
        List<StreamGroup> groups;
        lock (_groups)
        {
            groups = [.. _groups.Values.Where(g => g.Status.Role == RaftRole.Leader)];
        }
        return Task.WhenAll(groups.Select(g => g.HandOverAsync(timeout)));
    }

    public async ValueTask DisposeAsync()
    {
        Task tail;
        lock (_queue)
        {
            _disposed = true;
            tail = _tail;
        }
        await tail.ConfigureAwait(false);
        List<StreamGroup> groups;
        lock (_groups)
        {
            groups = [.. _groups.Values];
            _groups.Clear();
        }
        foreach (var group in groups)
        {
            await group.DisposeAsync().ConfigureAwait(false);
        }
    }
}
