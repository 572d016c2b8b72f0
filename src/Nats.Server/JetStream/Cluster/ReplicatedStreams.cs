using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

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
    private readonly Dictionary<(string Account, string Stream, string Consumer), ConsumerGroup> _consumerGroups = [];
    private readonly Lock _queue = new();
    private Task _tail = Task.CompletedTask;
    private bool _disposed;

    public void Assign(StreamAssignment assignment, bool replay) => Enqueue(() =>
    {
        AssignCore(assignment, replay, answerCreate: true, observer: false);
        return Task.CompletedTask;
    });

    /// <summary>An applied stream update (Go's updateStreamOp), R1 streams included: see <see cref="StreamUpdates"/>.</summary>
    public void Update(StreamAssignment previous, StreamAssignment updated, bool replay) => Enqueue(() => StreamUpdates.ApplyAsync(this, previous, updated, replay));

    internal MetaGroup Meta => meta;

    internal JetStreamService Service => service;

    internal Account System => system;

    internal ILogger Logger => logger;

    /// <param name="answer">Whether this server (the meta leader) answers the delete request.</param>
    public void Remove(StreamAssignment assignment, bool answer) => Enqueue(() => RemoveCoreAsync(assignment, answer));

    public void AssignConsumer(ConsumerAssignment assignment, bool replay) => Enqueue(() =>
    {
        AssignConsumerCore(assignment, replay);
        return Task.CompletedTask;
    });

    /// <param name="answer">Whether this server (the meta leader) answers the delete request.</param>
    public void RemoveConsumer(ConsumerAssignment assignment, bool answer) => Enqueue(() => RemoveConsumerCoreAsync(assignment, answer));

    /// <summary>The group of a replicated consumer this server holds a replica of, or null.</summary>
    public ConsumerGroup? FindConsumer(string account, string stream, string consumer)
    {
        lock (_groups)
        {
            return _consumerGroups.GetValueOrDefault((account, stream, consumer));
        }
    }

    /// <summary>The stream and consumer groups this server is a member of (Go counts each as a RAFT node).</summary>
    public int GroupCount
    {
        get
        {
            lock (_groups)
            {
                return _groups.Count + _consumerGroups.Count;
            }
        }
    }

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

    /// <param name="answerCreate">Whether the group's first leader answers a create (not for a replica a scale-up adds).</param>
    /// <param name="observer">A replica a scale-up adds: it may not lead before it has caught up (<see cref="StreamGroup"/>).</param>
    internal void AssignCore(StreamAssignment assignment, bool replay, bool answerCreate, bool observer)
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
        Action<StreamGroup>? answer = fresh && answerCreate && !replay && assignment.Reply.Length > 0
            ? _ => Task.Run(() => AnswerCreate(account, js, stream, assignment))
            : null;
        group.Start(meta.StoreDirectory, system, campaign: fresh && !observer && assignment.Peer == meta.PeerId, answer, observer);
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
        var group = await StopGroupsAsync(assignment.Account, assignment.Stream, consumerGroups: true).ConfigureAwait(false);
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

    /// <summary>Registers a group started outside <see cref="AssignCore"/> (a scale-up of an R1 stream).</summary>
    internal void AddGroup(StreamAssignment assignment, StreamGroup group)
    {
        lock (_groups)
        {
            _groups[(assignment.Account, assignment.Stream)] = group;
        }
    }

    /// <summary>
    /// Removes this member's group of a stream (with <paramref name="consumerGroups"/>, its consumers' groups too): a
    /// scale-down that keeps or drops this replica. Returns the stream group, disposed and its log deleted, or null.
    /// </summary>
    internal async Task<StreamGroup?> StopGroupsAsync(string account, string stream, bool consumerGroups)
    {
        StreamGroup? group;
        List<ConsumerGroup> consumers;
        lock (_groups)
        {
            _groups.Remove((account, stream), out group);
            var keys = consumerGroups ? _consumerGroups.Keys.Where(k => k.Account == account && k.Stream == stream).ToList() : [];
            consumers = [.. keys.Select(k => _consumerGroups[k])];
            foreach (var key in keys)
            {
                _consumerGroups.Remove(key);
            }
        }
        foreach (var consumer in consumers)
        {
            await consumer.DisposeAsync().ConfigureAwait(false);
            consumer.DeleteLog();
        }
        if (group is not null)
        {
            await group.DisposeAsync().ConfigureAwait(false);
            group.DeleteLog();
        }
        return group;
    }

    internal void Respond<T>(Account account, JsAccount js, StreamAssignment assignment, T response,
        System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type, JsApiError? error) =>
        Respond(account, js, assignment.Subject, assignment.Reply, assignment.Config, response, type, error);

    private void Respond<T>(Account account, JsAccount js, string subject, string reply, byte[] body, T response,
        System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type, JsApiError? error)
    {
        if (reply.Length == 0)
        {
            return;
        }
        var request = new ApiRequest
        {
            JsAccount = js,
            Account = account,
            Subject = subject,
            Reply = Encoding.UTF8.GetBytes(reply),
            Body = body,
        };
        ApiRouter.Respond(service, request, response, type, error);
    }

    /// <summary>Every stream and consumer group this server leads hands over to another member (a clean shutdown), all at once.</summary>
    public Task HandOverAsync(TimeSpan timeout)
    {
        List<Task> handOvers;
        lock (_groups)
        {
            handOvers = [.. _groups.Values.Where(g => g.Status.Role == RaftRole.Leader).Select(g => g.HandOverAsync(timeout)),
                .. _consumerGroups.Values.Where(g => g.Status.Role == RaftRole.Leader).Select(g => g.HandOverAsync(timeout))];
        }
        return Task.WhenAll(handOvers);
    }

    /// <summary>
    /// A consumer placed here: its copy (store opened or recovered) and its group; an existing one takes the new
    /// config, and its leader answers the update. An R1 consumer (an ephemeral) has no group.
    /// </summary>
    private void AssignConsumerCore(ConsumerAssignment assignment, bool replay)
    {
        if (meta.Server.FindAccount(assignment.Account) is not { } account || service.FindAccount(account) is not { } js)
        {
            return;
        }
        if (js.FindStream(assignment.Stream) is not { } stream)
        {
            logger.LogWarning("JetStream cluster consumer '{Account} > {Stream} > {Consumer}' assigned without its stream",
                assignment.Account, assignment.Stream, assignment.Name);
            return;
        }
        if (assignment.Peers.Count == 1)
        {
            AssignSingleConsumer(account, js, stream, assignment, replay);
            return;
        }
        var key = (assignment.Account, assignment.Stream, assignment.Name);
        ConsumerGroup? existing;
        lock (_groups)
        {
            existing = _consumerGroups.GetValueOrDefault(key);
        }
        if (existing is not null)
        {
            existing.Assignment = assignment;
            if (existing.Consumer is { } updated)
            {
                updated.Update(assignment.Config);
                if (!replay && existing.IsActiveLeader)
                {
                    AnswerConsumerCreate(account, js, updated, assignment);
                }
            }
            return;
        }
        Storage.IConsumerStore inner;
        try
        {
            inner = stream.Store.ConsumerStore(assignment.Name, JsConsumer.StoreConfig(assignment.Config, assignment.Created));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or Storage.StoreException)
        {
            logger.LogWarning("JetStream cluster could not create consumer '{Account} > {Stream} > {Consumer}': {Error}",
                assignment.Account, assignment.Stream, assignment.Name, e.Message);
            return;
        }
        var group = new ConsumerGroup(meta, assignment, inner, logger);
        var consumer = stream.Consumers.AddReplica(assignment.Name, assignment.Config, assignment.Created, group.Store);
        consumer.Group = group;
        if (!assignment.Config.IsDurable)
        {
            consumer.Expired = _ => RemoveExpired(assignment);
        }
        consumer.LoadState(inner.State());
        group.Consumer = consumer;
        lock (_groups)
        {
            _consumerGroups[key] = group;
        }
        var fresh = !replay && !inner.HasState();
        Action<ConsumerGroup>? answer = fresh && assignment.Reply.Length > 0
            ? _ =>
            {
                try
                {
                    AnswerConsumerCreate(account, js, consumer, assignment);
                    ConsumerAdvisories.Action(consumer, "create");
                }
                finally
                {
                    consumer.Run();
                }
            }
        : null;
        // The stream's leader campaigns first, so that a consumer usually delivers from where its messages are stored; the
        // first member when the stream's leader is not one (an ephemeral on some of the stream's members).
        var streamGroup = Find(assignment.Account, assignment.Stream);
        var campaign = fresh && (streamGroup is { IsActiveLeader: true }
            || (assignment.Peers[0] == meta.PeerId && (streamGroup?.Status.Leader is not { } leader || !assignment.Peers.Contains(leader))));
        group.Start(meta.StoreDirectory, system, campaign, answer);
    }

    /// <summary>
    /// An R1 consumer (Go's ephemeral on a limits stream) placed here: no RAFT group, as in Go; created (or updated) on
    /// this member's replica of the stream, which answers the client, then delivers.
    /// </summary>
    private void AssignSingleConsumer(Account account, JsAccount js, JsStream stream, ConsumerAssignment assignment, bool replay)
    {
        JsConsumer consumer;
        try
        {
            consumer = stream.Consumers.Add(assignment.Config);
        }
        catch (Exception e) when (e is JsApiException or IOException or UnauthorizedAccessException or Storage.StoreException)
        {
            logger.LogWarning("JetStream cluster could not create consumer '{Account} > {Stream} > {Consumer}': {Error}",
                assignment.Account, assignment.Stream, assignment.Name, e.Message);
            if (!replay)
            {
                var error = e is JsApiException api ? api.Error : JsErrors.ConsumerCreate.WithErr(e.Message);
                Respond(account, js, assignment.Subject, assignment.Reply, [],
                    new ConsumerErrorResponse { Type = Prefix + "consumer_create_response", Error = error }, ConsumerJson.Context.ConsumerErrorResponse, error);
            }
            return;
        }
        consumer.Expired = _ => RemoveExpired(assignment);
        if (!replay)
        {
            AnswerConsumerCreate(account, js, consumer, assignment);
        }
        consumer.Run();
    }

    /// <summary>
    /// Go's deleteNotActive in a cluster: an ephemeral that expired here has its assignment removed through the meta
    /// group, retried each second until it is gone. Go forwards the proposal ($NRG.P); a follower here sends the meta
    /// leader a CONSUMER.DELETE request without a reply instead.
    /// </summary>
    private void RemoveExpired(ConsumerAssignment assignment)
    {
        var removal = assignment with { Subject = "", Reply = "" };
        var subject = Encoding.UTF8.GetBytes($"$JS.API.CONSUMER.DELETE.{assignment.Stream}.{assignment.Name}");
        _ = Task.Run(async () =>
        {
            for (var attempt = 0; attempt < 30 && !_disposed
                && meta.AssignedConsumer(assignment.Account, assignment.Stream, assignment.Name) is { } current && current.Group == assignment.Group; attempt++)
            {
                if (meta.IsLeader)
                {
                    meta.Propose(ConsumerAssignment.RemoveOp, removal.Encode());
                }
                else if (meta.Server.FindAccount(assignment.Account) is { } account)
                {
                    service.Transport.Publish(account, subject, default, default, default);
                }
                await Task.Delay(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
            }
        });
    }

    private void AnswerConsumerCreate(Account account, JsAccount js, JsConsumer consumer, ConsumerAssignment assignment)
    {
        var info = consumer.Info(Prefix + "consumer_create_response");
        Respond(account, js, assignment.Subject, assignment.Reply, [], info, ConsumerJson.Context.ConsumerInfo, null);
    }

    private async Task RemoveConsumerCoreAsync(ConsumerAssignment assignment, bool answer)
    {
        ConsumerGroup? group;
        lock (_groups)
        {
            _consumerGroups.Remove((assignment.Account, assignment.Stream, assignment.Name), out group);
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
        if (js.FindStream(assignment.Stream)?.Consumers is { } consumers && consumers.Find(assignment.Name) is { } consumer
            && (group is null || ReferenceEquals(consumer.Group, group)))
        {
            consumers.Delete(consumer, advisory: answer);
        }
        if (answer)
        {
            var response = new SuccessResponse { Type = Prefix + "consumer_delete_response", Success = true };
            Respond(account, js, assignment.Subject, assignment.Reply, [], response, JsJson.Context.SuccessResponse, null);
        }
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
        List<ConsumerGroup> consumers;
        lock (_groups)
        {
            groups = [.. _groups.Values];
            _groups.Clear();
            consumers = [.. _consumerGroups.Values];
            _consumerGroups.Clear();
        }
        foreach (var consumer in consumers)
        {
            await consumer.DisposeAsync().ConfigureAwait(false);
        }
        foreach (var group in groups)
        {
            await group.DisposeAsync().ConfigureAwait(false);
        }
    }
}
