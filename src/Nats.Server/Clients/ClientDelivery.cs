using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Protocol;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// Delivery into one client, on behalf of a publisher (called on the publisher's read loop): echo,
/// delivery permissions and header stripping, then the copy into the client's
/// <see cref="OutboundQueue"/> with its outcomes (max_pending, auto-unsubscribe, the stall gate, a
/// no_fast_producer_stall drop). A publisher waiting on this client to drain
/// (<see cref="StallList"/>) waits here; a client that makes no progress is cut at the write deadline, or
/// stops pausing publishers after a second of it (then max_pending bounds it).
/// </summary>
internal sealed class ClientDelivery : IDrainable
{
    private static readonly TimeSpan MaxStuckTime = TimeSpan.FromSeconds(1);

    private readonly ClientConnection _client;
    private readonly NatsServer _server;
    private readonly ConnectionSettings _settings;
    private readonly ConnectionAuth _auth;
    private readonly OutboundQueue _outbound;
    private readonly ILogger _logger;
    private long _stalls;
    private long _fastProducerDrops;

    public ClientDelivery(ClientConnection client, NatsServer server, ConnectionSettings settings, ConnectionAuth auth, OutboundQueue outbound, ILogger logger)
    {
        _client = client;
        _server = server;
        _settings = settings;
        _auth = auth;
        _outbound = outbound;
        _logger = logger;
    }

    /// <summary>Times this client's full queue paused a publisher.</summary>
    public long Stalls => Interlocked.Read(ref _stalls);

    /// <summary>Messages dropped for this client under no_fast_producer_stall.</summary>
    public long FastProducerDrops => Interlocked.Read(ref _fastProducerDrops);

    /// <summary>
    /// Queues one message (the prebuilt MSG/HMSG line, split around the sid, and the payload) for this
    /// client. Returns false when nothing was queued: echo off, not permitted, closed, dropped, or the
    /// auto-unsubscribe limit passed.
    /// </summary>
    public bool TryDeliver(
        Delivery.MessageOrigin publisher,
        Subscription subscription,
        ReadOnlySpan<byte> prefix,
        ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message,
        int headerSize,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> reply)
    {
        var settings = _settings;
        if (publisher.Connection == _client && !settings.Echo)
        {
            return false;
        }
        if (_auth.Permissions is { } permissions && !permissions.AllowDelivery(subject, reply))
        {
            return false;
        }
        if (headerSize > 0 && !settings.Headers)
        {
            return DeliverWithoutHeaders(publisher, subscription, subject, reply, message[headerSize..]);
        }
        return Enqueue(publisher, subscription, prefix, suffix, message);
    }

    /// <summary>Copies one MSG/HMSG into the outbound queue (the checks of <see cref="TryDeliver"/> are done).</summary>
    private bool Enqueue(
        Delivery.MessageOrigin publisher,
        Subscription subscription,
        ReadOnlySpan<byte> prefix,
        ReadOnlySpan<byte> suffix,
        ReadOnlySpan<byte> message)
    {
        var client = _client;
        var options = _settings.Options;
        // Only a client's own read loop can be paused; the server's internal publisher and self-delivery never are.
        var canStall = publisher.Connection != client && publisher.CanStall;
        var result = _outbound.AppendMessage(subscription, prefix, suffix, message, options.MaxPending,
            options.NoFastProducerStall && !publisher.WaitsForSubscribers, canStall, out var stall);
        switch (result)
        {
            case AppendResult.Closed:
                return false;
            case AppendResult.SlowConsumer:
                _server.RecordSlowConsumer();
                _logger.LogInformation("{Client} - Slow Consumer Detected: MaxPending of {MaxPending} Exceeded", client, options.MaxPending);
                client.CloseConnection(ClosedReason.SlowConsumerPendingBytes);
                return false;
            case AppendResult.Dropped:
                Interlocked.Increment(ref _fastProducerDrops);
                _server.RecordFastProducerDrop();
                return false;
            case AppendResult.PastMax:
                client.RemoveSubscription(subscription);
                return false;
            case AppendResult.QueuedReachedMax:
                client.RemoveSubscription(subscription);
                break;
        }
        if (stall)
        {
            publisher.StalledOn.Add(this);
        }
        publisher.FlushBatch.Add(client);
        return true;
    }

    /// <summary>A client that did not ask for headers gets the body only, as a plain MSG (Go strips them too).</summary>
    private bool DeliverWithoutHeaders(Delivery.MessageOrigin publisher, Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> body)
    {
        var needed = MsgLine.MaxLength(subject.Length, reply.Length, 0);
        byte[]? rented = null;
        var span = needed <= 512 ? stackalloc byte[512] : (rented = System.Buffers.ArrayPool<byte>.Shared.Rent(needed));
        var position = MsgLine.WriteSplit(span, subject, reply, replySet: false, headerSize: 0, body.Length - 2, out var prefixLength);
        var delivered = Enqueue(publisher, subscription, span[..prefixLength], span[prefixLength..position], body);
        if (rented is not null)
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
        return delivered;
    }

    private TimeSpan StuckBound
    {
        get
        {
            var deadline = _settings.Options.WriteDeadline;
            return deadline < MaxStuckTime ? deadline : MaxStuckTime;
        }
    }

    /// <summary>
    /// A publisher waits for this client to drain (see <see cref="StallList"/>). When the client writes nothing
    /// for <see cref="StuckBound"/> it is cut as a slow consumer if that bound is the write deadline; a shorter
    /// bound only stops publishers waiting on it.
    /// </summary>
    public async ValueTask WaitUntilDrainedAsync()
    {
        Interlocked.Increment(ref _stalls);
        _server.RecordStall();
        var bound = StuckBound;
        if (await _outbound.WaitUntilDrainedAsync(bound).ConfigureAwait(false) || _outbound.IsClosed)
        {
            return;
        }
        if (bound < _settings.Options.WriteDeadline)
        {
            // A second without progress is short of Go's write deadline: on a busy host the reader may only be
            // starved of CPU. The publisher goes back to full speed; max_pending or the write deadline (the
            // connection's tick) cut the reader if it really stopped.
            _outbound.SuspendStalls();
            return;
        }
        _server.RecordSlowConsumer();
        // Go's wording: its write deadline is the bound on a write making no progress, as our stuck bound is.
        _logger.LogInformation("{Client} - Slow Consumer Detected: WriteDeadline of {Bound} exceeded with {Chunks} chunks of {Pending} total bytes.",
            _client, GoDuration.Format(bound), _outbound.PendingChunks, _outbound.PendingAndInFlight);
        _client.CloseConnection(ClosedReason.SlowConsumerPendingBytes);
    }
}
