using Nats.Server.Accounts;

namespace Nats.Server.Routes;

/// <summary>
/// The routes and leaf connections one publish goes to (Go's c.in.rts): each route once, however many of its peer's
/// subscriptions matched, with the queue groups a draw assigned to it. Owned by one router on its
/// publishing thread; arrays are reused, so a steady stream of publishes allocates nothing.
/// </summary>
internal sealed class RouteTargets
{
    private Delivery.RemotePeer?[] _routes = new Delivery.RemotePeer?[4];
    private byte[][] _queues = [new byte[64], new byte[64], new byte[64], new byte[64]];
    private int[] _queueLengths = new int[4];
    private int _count;

    /// <summary>Adds <paramref name="route"/> (once) and, for a queue draw, the group's name to its list.</summary>
    public bool Add(Delivery.RemotePeer route, byte[]? queue)
    {
        var slot = 0;
        while (slot < _count && !ReferenceEquals(_routes[slot], route))
        {
            slot++;
        }
        if (slot == _count)
        {
            if (_count == _routes.Length)
            {
                Grow();
            }
            _routes[slot] = route;
            _queueLengths[slot] = 0;
            _count++;
        }
        if (queue is not null)
        {
            var length = _queueLengths[slot];
            var needed = length + queue.Length + 1;
            if (_queues[slot].Length < needed)
            {
                Array.Resize(ref _queues[slot], Math.Max(needed, _queues[slot].Length * 2));
            }
            if (length > 0)
            {
                _queues[slot][length++] = (byte)' ';
            }
            queue.CopyTo(_queues[slot], length);
            _queueLengths[slot] = length + queue.Length;
        }
        return true;
    }

    /// <summary>Sends one RMSG/HMSG per collected route and empties the set.</summary>
    public void Flush(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize, ReadOnlySpan<byte> message,
        Delivery.MessageOrigin publisher)
    {
        for (var i = 0; i < _count; i++)
        {
            var route = _routes[i]!;
            _routes[i] = null;
            route.SendMessage(account.NameUtf8, subject, reply, _queues[i].AsSpan(0, _queueLengths[i]), headerSize, message, publisher);
        }
        _count = 0;
    }

    private void Grow()
    {
        var size = _routes.Length * 2;
        Array.Resize(ref _routes, size);
        Array.Resize(ref _queueLengths, size);
        var old = _queues.Length;
        Array.Resize(ref _queues, size);
        for (var i = old; i < size; i++)
        {
            _queues[i] = new byte[64];
        }
    }
}
