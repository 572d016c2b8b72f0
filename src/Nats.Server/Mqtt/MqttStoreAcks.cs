using System.Buffers.Text;
using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Server.Subscriptions;
using Nats.Storage;

namespace Nats.Server.Mqtt;

/// <summary>
/// PUBACKs and PUBRECs of one connection, each held until JetStream's PubAck says the stored copy
/// (<c>$MQTT_msgs</c> for QoS 1, <c>$MQTT_qos2in</c> for QoS 2) is durable, as Go's read loop waits
/// for jsa.storeMsg before answering: "acknowledged" means the message survives a crash. The store
/// publish carries a reply subject <c>$MQTT.JSA.&lt;server&gt;.PA.&lt;connection&gt;.&lt;ticket&gt;</c>
/// routed to this handler, so no thread waits; answers leave in the order the PUBLISH packets arrived
/// (tickets are consecutive; a completed ticket waits for the ones before it).
/// </summary>
internal sealed class MqttStoreAcks
{
    private const int Pending = 0, Stored = 1, Failed = 2;

    private readonly Lock _lock = new();
    private readonly MqttOutbound _outbound;
    private readonly Action<byte, ushort, string> _failed;
    private readonly Account _account;
    private readonly Subscription _subscription;
    private readonly byte[] _replyPrefix;
    private readonly byte[] _reply;

    // A ring of waiting answers: ticket t lives at (t - _head) from _start.
    private (byte Packet, ushort PacketId, int State)[] _ring = new (byte, ushort, int)[64];
    private int _start;
    private int _count;
    private ulong _head = 1;

    public MqttStoreAcks(ClientConnection nats, Account account, string serverHash, ulong connectionId, MqttOutbound outbound,
        Action<byte, ushort, string> failed)
    {
        _outbound = outbound;
        _failed = failed;
        _account = account;
        var prefix = $"$MQTT.JSA.{serverHash}.PA.{connectionId.ToString(System.Globalization.CultureInfo.InvariantCulture)}.";
        _replyPrefix = Encoding.ASCII.GetBytes(prefix);
        _reply = new byte[_replyPrefix.Length + 20];
        _replyPrefix.CopyTo(_reply, 0);
        _subscription = new Subscription(new HandlerReceiver(OnPubAck, nats), Encoding.ASCII.GetBytes(prefix + "*"), null,
            Encoding.ASCII.GetBytes("mqtt-pa-" + connectionId));
        account.SubList.Insert(_subscription);
    }

    /// <summary>Reserves the next answer (PUBACK or PUBREC for <paramref name="packetId"/>); returns the reply subject for the store publish.</summary>
    public ReadOnlySpan<byte> Expect(byte packet, ushort packetId)
    {
        ulong ticket;
        lock (_lock)
        {
            if (_count == _ring.Length)
            {
                var grown = new (byte, ushort, int)[_ring.Length * 2];
                for (var i = 0; i < _count; i++)
                {
                    grown[i] = _ring[(_start + i) % _ring.Length];
                }
                _ring = grown;
                _start = 0;
            }
            _ring[(_start + _count) % _ring.Length] = (packet, packetId, Pending);
            ticket = _head + (ulong)_count;
            _count++;
        }
        // Only the read loop reserves, so the reply buffer is not shared between threads.
        Utf8Formatter.TryFormat(ticket, _reply.AsSpan(_replyPrefix.Length), out var written);
        return _reply.AsSpan(0, _replyPrefix.Length + written);
    }

    /// <summary>An answer needing no store (a refused publish Go still acknowledges, a QoS 2 packet id already held), in order.</summary>
    public void Immediate(byte packet, ushort packetId)
    {
        lock (_lock)
        {
            if (_count == 0)
            {
                Send(packet, packetId);
                _head++;
                return;
            }
        }
        var reply = Expect(packet, packetId);
        Complete(reply[_replyPrefix.Length..], stored: true, default);
    }

    /// <summary>An answer about a message stored earlier (a QoS 2 packet id already held): in order, once <paramref name="durable"/> completes.</summary>
    public void AfterDurable(byte packet, ushort packetId, DurabilityTicket durable)
    {
        if (durable.IsDurable)
        {
            Immediate(packet, packetId);
            return;
        }
        var ticket = Expect(packet, packetId)[_replyPrefix.Length..].ToArray();
        durable.AsTask().ContinueWith(static (task, state) =>
        {
            var (acks, ticket) = ((MqttStoreAcks, byte[]))state!;
            var error = task.Exception?.GetBaseException().Message ?? "";
            acks.Complete(ticket, task.IsCompletedSuccessfully, Encoding.UTF8.GetBytes(error));
        }, (this, ticket), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>The store publish reached no stream (the MQTT stream is gone): the answer is never sent.</summary>
    public void NotStored(ReadOnlySpan<byte> reply) => Complete(reply[_replyPrefix.Length..], stored: false, "no stream received the message"u8);

    /// <summary>Stops listening; answers still waiting are dropped (the client resends on reconnect, with DUP).</summary>
    public void Close() => _account.SubList.Remove(_subscription);

    private bool OnPubAck(Subscription subscription, MessageOrigin publisher, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply,
        ReadOnlySpan<byte> headers, ReadOnlySpan<byte> body)
    {
        if (subject.Length <= _replyPrefix.Length)
        {
            return true;
        }
        // JSPubAckResponse: an error object first when refused, {"stream":...,"seq":N} when stored.
        var failed = body.IndexOf("\"error\""u8) >= 0;
        Complete(subject[_replyPrefix.Length..], !failed, body);
        return true;
    }

    private void Complete(ReadOnlySpan<byte> ticketText, bool stored, ReadOnlySpan<byte> error)
    {
        if (!Utf8Parser.TryParse(ticketText, out ulong ticket, out var consumed) || consumed != ticketText.Length)
        {
            return;
        }
        (byte Packet, ushort PacketId)? refused = null;
        lock (_lock)
        {
            if (ticket < _head || ticket - _head >= (ulong)_count)
            {
                return;
            }
            ref var entry = ref _ring[(_start + (int)(ticket - _head)) % _ring.Length];
            if (entry.State != Pending)
            {
                return;
            }
            entry.State = stored ? Stored : Failed;
            if (!stored)
            {
                refused = (entry.Packet, entry.PacketId);
            }
            while (_count > 0 && _ring[_start] is { State: not Pending } done)
            {
                if (done.State == Stored)
                {
                    Send(done.Packet, done.PacketId);
                }
                _start = (_start + 1) % _ring.Length;
                _count--;
                _head++;
            }
        }
        if (refused is { } r)
        {
            // Go: a store error ends mqttProcessPub with an error: no PUBACK/PUBREC, the connection closes.
            _failed(r.Packet, r.PacketId, Encoding.UTF8.GetString(error));
        }
    }

    /// <summary>MQTT 5: told of every PUBACK sent, for the Receive Maximum count.</summary>
    public MqttV5Link? Link { get; set; }

    private void Send(byte packet, ushort packetId)
    {
        Span<byte> answer = [packet, 2, (byte)(packetId >> 8), (byte)packetId];
        _outbound.Enqueue(answer);
        if (packet == MqttPackets.PubAck)
        {
            Link?.PubAckSent();
        }
    }
}
