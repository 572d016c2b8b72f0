using Nats.Server.Clients;

namespace Nats.Server.Mqtt;

/// <summary>
/// Outbound bytes of one MQTT connection: producers (the connection's read loop and publishers'
/// threads delivering to its subscriptions) append encoded packets under a short lock into one of two
/// buffers; the write loop swaps them and writes a whole batch, so a fan-out costs a copy and no
/// allocation in steady state.
/// </summary>
internal sealed class MqttOutbound
{
    private readonly Lock _lock = new();
    private readonly AsyncSignal _signal = new();
    private readonly long _maxPending;
    private byte[] _filling = new byte[4096];
    private byte[] _spare = new byte[4096];
    private int _length;
    private bool _closed;

    public MqttOutbound(long maxPending) => _maxPending = maxPending;

    /// <summary>Raised (once, outside the lock) when pending bytes exceed max_pending.</summary>
    public event Action? SlowConsumer;

    public void Enqueue(ReadOnlySpan<byte> packet)
    {
        bool slow;
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }
            slow = !Reserve(packet.Length);
            if (!slow)
            {
                packet.CopyTo(_filling.AsSpan(_length));
                _length += packet.Length;
            }
        }
        Finish(slow);
    }

    public void Close()
    {
        lock (_lock)
        {
            _closed = true;
        }
        _signal.Set();
    }

    /// <summary>Writes batches until closed; the final flush happens before it returns.</summary>
    public async Task RunAsync(Stream stream, CancellationToken cancellationToken)
    {
        while (true)
        {
            await _signal.WaitAsync().ConfigureAwait(false);
            byte[] batch;
            int length;
            bool closed;
            lock (_lock)
            {
                batch = _filling;
                length = _length;
                closed = _closed;
                _filling = _spare;
                _spare = batch;
                _length = 0;
            }
            if (length > 0)
            {
                await stream.WriteAsync(batch.AsMemory(0, length), cancellationToken).ConfigureAwait(false);
            }
            if (closed)
            {
                return;
            }
        }
    }

    private bool Reserve(int size)
    {
        if (_length + size > _maxPending)
        {
            return false;
        }
        if (_length + size > _filling.Length)
        {
            var grown = new byte[Math.Max(_length + size, _filling.Length * 2)];
            _filling.AsSpan(0, _length).CopyTo(grown);
            _filling = grown;
        }
        return true;
    }

    private void Finish(bool slow)
    {
        if (slow)
        {
            SlowConsumer?.Invoke();
            return;
        }
        _signal.Set();
    }
}
