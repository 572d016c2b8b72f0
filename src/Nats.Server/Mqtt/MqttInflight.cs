namespace Nats.Server.Mqtt;

/// <summary>
/// A session's packet identifiers in flight to its client (Go's pendingPublish, pendingPubRel and
/// cpending): each maps to the JetStream ack subject that settles it, and a redelivery of the same
/// stream message by the same consumer reuses its identifier. Not thread-safe: the session locks.
/// </summary>
internal sealed class MqttInflight(int maxPending)
{
    private readonly Dictionary<ushort, Entry> _publish = [];
    private readonly Dictionary<ushort, Entry> _pubRel = [];
    private readonly Dictionary<string, Dictionary<ulong, ushort>> _byConsumer = new(StringComparer.Ordinal);
    private ushort _last;

    /// <summary>What <see cref="TrackPublish"/> stops at: max_ack_pending, or an MQTT 5 client's smaller receive maximum.</summary>
    public int Limit { get; set; } = maxPending;

    public int Count => _publish.Count + _pubRel.Count;

    /// <summary>
    /// Go's trackPublish: the identifier for a delivery of <paramref name="sseq"/> by <paramref name="durable"/>
    /// (reused on redelivery); 0 when the session is at max_ack_pending or a PUBREL already holds it.
    /// </summary>
    public ushort TrackPublish(string durable, ulong sseq, string ackSubject)
    {
        if (!_byConsumer.TryGetValue(durable, out var bySeq))
        {
            _byConsumer[durable] = bySeq = [];
        }
        if (bySeq.TryGetValue(sseq, out var pi))
        {
            if (_pubRel.ContainsKey(pi))
            {
                return 0;
            }
            _publish[pi] = new Entry(durable, sseq, ackSubject);
            return pi;
        }
        if (_publish.Count >= Limit || (pi = Next()) == 0)
        {
            return 0;
        }
        bySeq[sseq] = pi;
        _publish[pi] = new Entry(durable, sseq, ackSubject);
        return pi;
    }

    /// <summary>A retained QoS 1/2 message sent on subscribe: an identifier with nothing to acknowledge in JetStream.</summary>
    public ushort TrackRetained()
    {
        var pi = Next();
        if (pi != 0)
        {
            _publish[pi] = new Entry(null, 0, null);
        }
        return pi;
    }

    /// <summary>PUBACK or PUBREC: stops tracking the PUBLISH; returns the ack subject to settle (null if none).</summary>
    public string? UntrackPublish(ushort pi)
    {
        if (!_publish.Remove(pi, out var entry))
        {
            return null;
        }
        if (_publish.Count == 0 && _pubRel.Count == 0)
        {
            _last = 0;
        }
        Forget(entry);
        return entry.AckSubject;
    }

    /// <summary>Go's trackAsPubRel: after PUBREC (no ack subject yet), then when the PUBREL consumer delivers it.</summary>
    public void TrackPubRel(ushort pi, string durable, ulong sseq, string? ackSubject)
    {
        if (ackSubject is null)
        {
            _pubRel[pi] = new Entry(durable, 0, null);
            return;
        }
        if (!_byConsumer.TryGetValue(durable, out var bySeq))
        {
            _byConsumer[durable] = bySeq = [];
        }
        bySeq[sseq] = pi;
        _pubRel[pi] = new Entry(durable, sseq, ackSubject);
    }

    /// <summary>PUBCOMP: the ack subject of the stored PUBREL (null if none).</summary>
    public string? UntrackPubRel(ushort pi)
    {
        if (!_pubRel.Remove(pi, out var entry))
        {
            return null;
        }
        Forget(entry);
        return entry.AckSubject;
    }

    public void Clear()
    {
        _publish.Clear();
        _pubRel.Clear();
        _byConsumer.Clear();
        _last = 0;
    }

    private void Forget(Entry entry)
    {
        if (entry.Durable is not null && entry.Sseq != 0 && _byConsumer.TryGetValue(entry.Durable, out var bySeq))
        {
            bySeq.Remove(entry.Sseq);
        }
    }

    /// <summary>Go's bumpPI: the next identifier used neither by a PUBLISH nor by a PUBREL in flight.</summary>
    private ushort Next()
    {
        var next = _last;
        for (var i = 0; i < ushort.MaxValue; i++)
        {
            next = next == ushort.MaxValue ? (ushort)1 : (ushort)(next + 1);
            if (!_publish.ContainsKey(next) && !_pubRel.ContainsKey(next))
            {
                _last = next;
                return next;
            }
        }
        return 0;
    }

    /// <summary>The stream sequence and delivery count in a JetStream ack subject
    /// (<c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;delivered&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c>).</summary>
    public static bool TryParseAck(ReadOnlySpan<byte> reply, out ulong sseq, out ulong delivered)
    {
        sseq = 0;
        delivered = 0;
        if (!reply.StartsWith("$JS.ACK."u8))
        {
            return false;
        }
        var rest = reply[8..];
        for (var skip = 0; skip < 2; skip++)
        {
            var dot = rest.IndexOf((byte)'.');
            if (dot < 0)
            {
                return false;
            }
            rest = rest[(dot + 1)..];
        }
        return System.Buffers.Text.Utf8Parser.TryParse(rest, out delivered, out var used) && rest.Length > used && rest[used] == '.'
            && System.Buffers.Text.Utf8Parser.TryParse(rest[(used + 1)..], out sseq, out _);
    }

    private readonly record struct Entry(string? Durable, ulong Sseq, string? AckSubject);
}
