namespace Nats.Server.Mqtt;

/// <summary>
/// Topic aliases from the server to one MQTT 5 client (specification 3.3.2.3.4), within the Topic Alias
/// Maximum its CONNECT set (and at most <see cref="Cap"/>): the first PUBLISH on a topic carries the topic
/// and binds an alias, later ones carry the alias and an empty topic. When every alias is taken, the
/// oldest binding is reused. Encoding and queueing happen under <see cref="Sync"/>, so a binding always
/// reaches the client before the packets that rely on it, whichever publisher's thread sends them.
/// </summary>
internal sealed class MqttOutboundAliases
{
    /// <summary>Aliases we use at most, however many the client allows.</summary>
    public const int Cap = 64;

    private readonly byte[][] _topics;
    private readonly int[] _lengths;
    private int _count;
    private int _next;

    public MqttOutboundAliases(ushort clientMaximum)
    {
        var size = Math.Min((int)clientMaximum, Cap);
        _topics = new byte[size][];
        _lengths = new int[size];
    }

    public Lock Sync { get; } = new();

    /// <summary>The alias for <paramref name="topic"/>: one the client knows (<paramref name="known"/>), or the one to bind with <see cref="Bind"/> once the PUBLISH is queued.</summary>
    public ushort Find(ReadOnlySpan<byte> topic, out bool known)
    {
        for (var i = 0; i < _count; i++)
        {
            if (topic.SequenceEqual(_topics[i].AsSpan(0, _lengths[i])))
            {
                known = true;
                return (ushort)(i + 1);
            }
        }
        known = false;
        return (ushort)((_count < _topics.Length ? _count : _next) + 1);
    }

    /// <summary>The PUBLISH that carried <paramref name="topic"/> with <paramref name="alias"/> was queued: the client now knows it.</summary>
    public void Bind(ushort alias, ReadOnlySpan<byte> topic)
    {
        var index = alias - 1;
        if (_topics[index] is not { } held || held.Length < topic.Length)
        {
            _topics[index] = held = new byte[Math.Max(topic.Length, 64)];
        }
        topic.CopyTo(held);
        _lengths[index] = topic.Length;
        if (index == _count)
        {
            _count++;
        }
        else
        {
            _next = (_next + 1) % _topics.Length;
        }
    }
}
