using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.JetStream.Api;
using Nats.Subjects;

namespace Nats.Server.JetStream.Consumers;

/// <summary>A stream's consumers (Go's mset.consumers): adding with Go's rules, removal, new-message signals and interest/work-queue retention.</summary>
internal sealed class StreamConsumers(JsStream stream)
{
    private const int MaxNameLength = 255;
    private readonly Dictionary<string, JsConsumer> _consumers = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();
    private volatile JsConsumer[] _snapshot = [];

    public int Count => _snapshot.Length;

    public JsConsumer[] All => _snapshot;

    public JsConsumer? Find(string name)
    {
        lock (_lock)
        {
            return _consumers.GetValueOrDefault(name);
        }
    }

    /// <summary>Go's addConsumerWithAssignment for a standalone server; a JsApiException carries Go's error.</summary>
    public JsConsumer Add(ConsumerConfig config)
    {
        var js = stream.Account;
        ConsumerConfigCheck.SetDefaults(config, js.Limits);
        if (ConsumerConfigCheck.Check(config, stream.Config, js.Limits) is { } error)
        {
            throw new JsApiException(error);
        }
        // Go's updateInactiveThreshold: ephemerals get the default on create and on update.
        if (!config.IsDurable && config.InactiveThreshold == 0)
        {
            config.InactiveThreshold = ConsumerConfigCheck.DefaultInactiveThreshold;
        }
        JsConsumer consumer;
        lock (_lock)
        {
            var name = config.Durable ?? config.Name;
            if (name is not null && _consumers.TryGetValue(name, out var existing))
            {
                CheckUpdate(existing.Config, config, js);
                existing.Update(config);
                return existing;
            }
            var max = stream.Config.MaxConsumers;
            if (max <= 0 || (js.Limits.MaxConsumers > 0 && js.Limits.MaxConsumers < max))
            {
                max = js.Limits.MaxConsumers;
            }
            if (max > 0 && _consumers.Count >= max)
            {
                throw new JsApiException(JsErrors.MaximumConsumersLimit);
            }
            if (stream.Config.Retention == RetentionPolicy.WorkQueue && !config.Direct)
            {
                if (config.AckPolicy != AckPolicyKind.Explicit)
                {
                    throw new JsApiException(JsErrors.ConsumerWQRequiresExplicitAck);
                }
                if (_consumers.Count > 0)
                {
                    if (config.FilterSubject is null)
                    {
                        throw new JsApiException(JsErrors.ConsumerWQMultipleUnfiltered);
                    }
                    if (_consumers.Values.Any(c => c.Config.FilterSubject is not { } other || SubjectRules.Collide(other, config.FilterSubject)))
                    {
                        throw new JsApiException(JsErrors.ConsumerWQConsumerNotUnique);
                    }
                }
                if (config.DeliverPolicy != DeliverPolicy.All)
                {
                    throw new JsApiException(JsErrors.ConsumerWQConsumerNotDeliverAll);
                }
            }
            if (config.IsDurable)
            {
                if (config.Durable!.Length > MaxNameLength)
                {
                    throw new JsApiException(JsErrors.ConsumerNameTooLong.With("max", MaxNameLength));
                }
                name = config.Durable;
            }
            else if (name is null)
            {
                do
                {
                    name = RandomName();
                }
                while (_consumers.ContainsKey(name));
                config.Name = name;
            }
            if (name.Length == 0 || name.AsSpan().IndexOfAny(" \t\r\n\f.*>") >= 0)
            {
                throw new JsApiException(JsErrors.ConsumerBadDurableName);
            }
            var created = GoTime.Now();
            var store = Persisted(config)
                ? stream.Store.ConsumerStore(name, JsConsumer.StoreConfig(config, created))
                : null;
            consumer = new JsConsumer(stream, name, config, created, store);
            _consumers[name] = consumer;
            _snapshot = [.. _consumers.Values];
        }
        consumer.Start(recovered: false);
        ConsumerAdvisories.Action(consumer, "create");
        return consumer;
    }

    private bool Persisted(ConsumerConfig config) =>
        config.IsDurable && !config.MemoryStorage && stream.Config.Storage != StorageKind.Memory;

    /// <summary>Go's checkNewConsumerConfig: what an existing consumer may not change.</summary>
    internal static void CheckUpdate(ConsumerConfig old, ConsumerConfig updated, JsAccount js)
    {
        static void Fail(string text) => throw new JsApiException(JsErrors.ConsumerCreate.WithErr(text));
        var oldJson = JsonSerializer.Serialize(old, ConsumerJson.Context.ConsumerConfig);
        var newJson = JsonSerializer.Serialize(updated, ConsumerJson.Context.ConsumerConfig);
        if (oldJson == newJson)
        {
            return;
        }
        if (old.DeliverPolicy != updated.DeliverPolicy)
        {
            Fail("deliver policy can not be updated");
        }
        if (old.OptStartSeq != updated.OptStartSeq)
        {
            Fail("start sequence can not be updated");
        }
        // Go compares the *time.Time pointers, so any start time differs.
        if (old.OptStartTime is not null || updated.OptStartTime is not null)
        {
            Fail("start time can not be updated");
        }
        if (old.AckPolicy != updated.AckPolicy)
        {
            Fail("ack policy can not be updated");
        }
        if (old.ReplayPolicy != updated.ReplayPolicy)
        {
            Fail("replay policy can not be updated");
        }
        if (old.Heartbeat != updated.Heartbeat)
        {
            Fail("heart beats can not be updated");
        }
        if (old.FlowControl != updated.FlowControl)
        {
            Fail("flow control can not be updated");
        }
        if (old.MaxWaiting != updated.MaxWaiting)
        {
            Fail("max waiting can not be updated");
        }
        if (old.DeliverSubject != updated.DeliverSubject)
        {
            if (old.DeliverSubject is null)
            {
                Fail("can not update pull consumer to push based");
            }
            if (updated.DeliverSubject is null)
            {
                Fail("can not update push consumer to pull based");
            }
            if (JetStreamTransport.HasInterest(js.Account, old.DeliverSubject!))
            {
                throw new JsApiException(JsErrors.ConsumerNameExist);
            }
        }
        if (updated.BackOff is { Count: > 0 } backoff && updated.MaxDeliver <= backoff.Count)
        {
            throw new JsApiException(JsErrors.ConsumerMaxDeliverBackoff);
        }
    }

    internal static string RandomName()
    {
        const string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        Span<char> name = stackalloc char[8];
        for (var i = 0; i < name.Length; i++)
        {
            name[i] = alphabet[Random.Shared.Next(alphabet.Length)];
        }
        return new string(name);
    }

    /// <summary>
    /// A replicated consumer's copy on this replica (the meta group assigned it here): held, not started; its group
    /// activates it on the replica that leads. An existing copy takes the new config.
    /// </summary>
    public JsConsumer AddReplica(string name, ConsumerConfig config, GoTime created, Storage.IConsumerStore store)
    {
        lock (_lock)
        {
            if (_consumers.TryGetValue(name, out var existing))
            {
                return existing;
            }
            var consumer = new JsConsumer(stream, name, config, created, store);
            _consumers[name] = consumer;
            _snapshot = [.. _consumers.Values];
            return consumer;
        }
    }

    /// <summary>Recreates the durable consumers whose state the stream's store kept.</summary>
    public void Recover()
    {
        if (stream.Config.Replicas > 1 && stream.Account.Service.Server.Options.Cluster.Enabled)
        {
            // A replicated stream's durables come back through the meta group's consumer assignments, each with its group.
            return;
        }
        foreach (var name in stream.Store.ConsumerNames())
        {
            try
            {
                var store = stream.Store.ConsumerStore(name);
                var meta = JsonSerializer.Deserialize(store.Config.Metadata, ConsumerJson.Context.ConsumerMeta);
                if (meta is null)
                {
                    continue;
                }
                var consumer = new JsConsumer(stream, name, meta.Config, meta.Created, store);
                lock (_lock)
                {
                    _consumers[name] = consumer;
                    _snapshot = [.. _consumers.Values];
                }
                consumer.Start(recovered: true);
                consumer.Run();
            }
            catch (Exception e) when (e is JsonException or IOException or Storage.StoreException)
            {
                stream.Account.Service.Logger.LogWarning("JetStream consumer '{Stream} > {Consumer}' not recovered: {Error}", stream.LogName, name, e.Message);
            }
        }
    }

    public bool Delete(JsConsumer consumer, bool advisory)
    {
        lock (_lock)
        {
            if (!_consumers.TryGetValue(consumer.Name, out var found) || found != consumer)
            {
                return false;
            }
            _consumers.Remove(consumer.Name);
            _snapshot = [.. _consumers.Values];
        }
        consumer.Stop(deleted: true);
        if (advisory)
        {
            ConsumerAdvisories.Action(consumer, "delete");
        }
        if (stream.Config.Retention == RetentionPolicy.Interest)
        {
            InterestRetention.AfterDelete(stream, consumer, _snapshot);
        }
        return true;
    }

    public void StopAll(bool deleted)
    {
        JsConsumer[] all;
        lock (_lock)
        {
            all = [.. _consumers.Values];
            _consumers.Clear();
            _snapshot = [];
        }
        foreach (var consumer in all)
        {
            consumer.Stop(deleted);
        }
    }

    /// <summary>A message was stored: wake the consumers it is for; on an interest stream nobody wants it is dropped.</summary>
    public void OnStored(string subject, ulong seq)
    {
        var consumers = _snapshot;
        var interested = false;
        foreach (var consumer in consumers)
        {
            if (consumer.FilterMatches(subject))
            {
                interested = true;
                consumer.Signal();
            }
        }
        if (!interested && stream.Config.Retention == RetentionPolicy.Interest)
        {
            stream.RemoveMsg(seq, erase: false);
        }
    }

    /// <summary>Acknowledged by <paramref name="by"/>: a work queue drops them, an interest stream once no consumer still needs them.</summary>
    public void OnAcked(JsConsumer by, List<ulong> seqs)
    {
        var retention = stream.Config.Retention;
        if (retention == RetentionPolicy.Limits)
        {
            return;
        }
        foreach (var seq in seqs)
        {
            if (retention == RetentionPolicy.Interest)
            {
                var subject = stream.Store.SubjectForSeq(seq);
                if (subject is null || _snapshot.Any(c => c != by && c.NeedsAck(seq, subject)))
                {
                    continue;
                }
            }
            stream.RemoveMsg(seq, erase: false);
        }
    }
}
