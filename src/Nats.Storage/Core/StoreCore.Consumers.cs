using Nats.Storage.Consumers;

namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    private readonly Dictionary<string, ConsumerStoreBase> _consumers = new(StringComparer.Ordinal);
    private readonly Lock _consumerOpen = new();

    /// <summary>Opens (file: recovering) or creates a consumer's store; the engine decides where it lives.</summary>
    protected abstract ConsumerStoreBase OpenConsumer(string name, ConsumerStoreConfig? config);

    /// <summary>Names of consumers persisted by this stream, open or not.</summary>
    protected virtual IEnumerable<string> PersistedConsumers() => [];

    public IConsumerStore ConsumerStore(string name, ConsumerStoreConfig? config = null)
    {
        ValidateConsumerName(name);
        lock (_consumerOpen)
        {
            ConsumerStoreBase? open;
            lock (Sync)
            {
                ThrowIfClosed();
                _consumers.TryGetValue(name, out open);
            }
            if (open is not null && !open.IsClosed)
            {
                if (config is not null)
                {
                    open.UpdateConfig(config);
                }

                return open;
            }
            // Opened outside the stream lock: a file consumer's creation waits for its fsync, and
            // publishing must not wait with it. _consumerOpen keeps two opens of one name apart.
            var store = OpenConsumer(name, config);
            lock (Sync)
            {
                if (Closed)
                {
                    store.Stop();
                    throw new StoreException(StoreError.Closed);
                }
                _consumers[name] = store;
            }
            return store;
        }
    }

    public IReadOnlyList<string> ConsumerNames()
    {
        lock (Sync)
        {
            ThrowIfClosed();
            var names = new SortedSet<string>(PersistedConsumers(), StringComparer.Ordinal);
            foreach (var (name, store) in _consumers)
            {
                if (!store.IsDeleted)
                {
                    names.Add(name);
                }
            }
            return [.. names];
        }
    }

    private void StopConsumers()
    {
        foreach (var c in _consumers.Values)
        {
            c.Stop();
        }

        _consumers.Clear();
    }

    private static void ValidateConsumerName(string name)
    {
        if (string.IsNullOrEmpty(name) || name is "." or ".." || name.IndexOfAny(['/', '\\', '\0']) >= 0)
        {
            throw new StoreException(StoreError.InvalidArgument, "invalid consumer name");
        }
    }
}
