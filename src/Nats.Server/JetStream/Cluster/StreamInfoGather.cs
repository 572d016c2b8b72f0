using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Go's clustered stream info scatter and gather: every JetStream server answers <c>$JSC.SI.&lt;account&gt;.&lt;stream&gt;</c>
/// in the system account for the streams it leads (a replicated stream's active leader, an R1 stream's holder) with
/// the stream's info; the meta leader asks for a page of streams at once and collects the answers (STREAM.LIST,
/// account info, the leader of a stream whose replicas shrink).
/// </summary>
internal sealed class StreamInfoGather(MetaGroup meta, JetStreamService service, ILogger logger)
{
    private const string RequestPrefix = "$JSC.SI.";

    private readonly ConcurrentDictionary<string, Pending> _pending = new();
    private Delivery.InternalPublisher? _publisher;
    private Account? _system;
    private string _inbox = "";
    private long _requests;

    private sealed class Pending(int expected)
    {
        private readonly HashSet<string> _names = [];

        public List<StreamInfo> Infos { get; } = [];

        public TaskCompletionSource Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Add(StreamInfo info)
        {
            lock (Infos)
            {
                // One answer per stream (a leadership change may bring two).
                if (!_names.Add(info.Config.Name))
                {
                    return;
                }
                Infos.Add(info);
                if (Infos.Count >= expected)
                {
                    Done.TrySetResult();
                }
            }
        }
    }

    public void Start(Account system)
    {
        _system = system;
        _publisher = meta.Server.CreateInternalPublisher();
        _inbox = $"$JSC.SIR.{meta.PeerId}.";
        var client = InternalClient.Create(meta.Server, meta.Server.NextClientId(), system, logger);
        InternalClient.Subscribe(client, RequestPrefix + "*.*", "jsc-si", (_, _, subject, reply, _, _) =>
        {
            if (!reply.IsEmpty && Answer(Encoding.UTF8.GetString(subject)) is { } info)
            {
                Publish(reply, JsonSerializer.SerializeToUtf8Bytes(info, JsJson.Context.StreamInfo));
            }
            return true;
        });
        InternalClient.Subscribe(client, _inbox + "*", "jsc-sir", (_, _, subject, _, _, body) =>
        {
            var id = Encoding.UTF8.GetString(subject[_inbox.Length..]);
            if (_pending.TryGetValue(id, out var pending))
            {
                try
                {
                    if (JsonSerializer.Deserialize(body, JsJson.Context.StreamInfo) is { } info)
                    {
                        pending.Add(info);
                    }
                }
                catch (JsonException e)
                {
                    logger.LogWarning("Error unmarshaling clustered stream info response:{Error}", e.Message);
                }
            }
            return true;
        });
    }

    private void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload)
    {
        if (_publisher is not { } publisher || _system is not { } system)
        {
            return;
        }
        lock (publisher)
        {
            publisher.Publish(system, subject, default, default, payload);
        }
    }

    /// <summary>This server's info of the stream a request names, when it is the one to answer for it.</summary>
    private StreamInfo? Answer(string subject)
    {
        var tokens = subject.Split('.');
        if (tokens.Length != 4 || meta.Server.FindAccount(tokens[2]) is not { } account || service.FindAccount(account)?.FindStream(tokens[3]) is not { } stream)
        {
            return null;
        }
        var answers = stream.Group is { } group
            ? group.IsActiveLeader
            : stream.Config.Replicas <= 1 && meta.AssignedPeer(account.Name, stream.Name) == meta.PeerId;
        if (!answers)
        {
            return null;
        }
        var info = stream.Info();
        // Go's clustered info has no domain, and an R1 stream's cluster block names its holder.
        info.Domain = null;
        info.Cluster ??= new StreamClusterInfo { Name = meta.ClusterName, Leader = meta.Server.ServerName };
        return info;
    }

    /// <summary>
    /// Asks the servers that answer for <paramref name="streams"/> of <paramref name="account"/> for their info; returns
    /// what arrived within <paramref name="timeout"/> (Go waits 4 s), sorted by name.
    /// </summary>
    public async Task<List<StreamInfo>> GatherAsync(string account, IReadOnlyCollection<string> streams, TimeSpan timeout)
    {
        if (streams.Count == 0)
        {
            return [];
        }
        var id = Interlocked.Increment(ref _requests).ToString(CultureInfo.InvariantCulture);
        var pending = new Pending(streams.Count);
        _pending[id] = pending;
        try
        {
            var reply = Encoding.ASCII.GetBytes(_inbox + id);
            foreach (var stream in streams)
            {
                if (_publisher is { } publisher && _system is { } system)
                {
                    lock (publisher)
                    {
                        publisher.Publish(system, Encoding.UTF8.GetBytes(RequestPrefix + account + "." + stream), reply, default, default);
                    }
                }
            }
            try
            {
                await pending.Done.Task.WaitAsync(timeout).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                logger.LogWarning("Did not receive all stream info results for \"{Account}\"", account);
            }
            lock (pending.Infos)
            {
                return [.. pending.Infos.OrderBy(i => i.Config.Name, StringComparer.Ordinal)];
            }
        }
        finally
        {
            _pending.TryRemove(id, out _);
        }
    }
}
