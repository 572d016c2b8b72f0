using System.Buffers.Text;
using System.Globalization;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.JetStream.Api;
using Nats.Storage;
using Nats.Subjects;

namespace Nats.Server.JetStream.Consumers;

/// <summary>
/// One consumer (Go's consumer): where it is in the stream, what is delivered and not acknowledged,
/// waiting pull requests, and one delivery loop woken by new messages, acks and requests. State
/// changes happen under <see cref="_lock"/>; stream removals for retention happen outside it.
/// </summary>
internal sealed partial class JsConsumer : IDisposable
{
    private const long FlowControlLimit = 32 * 1024 * 1024;

    private readonly Lock _lock = new();
    private readonly SemaphoreSlim _wake = new(0, 1);

    // Subscribers the last pass filled past their stall threshold (delivery loop only).
    private readonly List<Clients.IDrainable> _stalls = [];
    private readonly Dictionary<ulong, PendingDelivery> _pending = [];
    private readonly Dictionary<ulong, ulong> _redelivered = [];
    private readonly List<ulong> _redeliverQueue = [];
    private readonly List<PullRequest> _waiting = [];
    private readonly List<IDisposable> _subscriptions = [];
    private readonly StoredMessage _message = new();
    private readonly DeliveryPacer _pacer = new();
    private readonly IConsumerStore? _store;
    private readonly JetStreamTransport _transport;
    private ConsumerConfig _config;
    private ulong _sseq;
    private ulong _dseq = 1;
    private ulong _ackFloorConsumer;
    private ulong _ackFloorStream;
    private Queue<ulong>? _lastPerSubject;
    private ulong _lastPerSubjectResume;
    private long _lastDelivered; // unix ns
    private long _lastAcked;
    private long _lastActive = Environment.TickCount64;
    private long _lastPushSend = Environment.TickCount64;
    private long _pendingBytes;
    private long _maxPendingBytes = FlowControlLimit / 16;
    private string? _flowControlId;
    private long _flowControlSize;
    private bool _pushActive;
    // Unix ns before which no pending delivery is due (Go's ack-wait timer): CheckPending scans only from then.
    private long _pendingCheckAt;
    // Stream sequences the loop's pass acknowledged (ack none on interest/work-queue streams); only the loop uses it.
    private readonly List<ulong> _pumpAcked = [];
    private volatile bool _stopped;
    // A replicated consumer's leaderships: a loop of an earlier one ends instead of delivering beside the next.
    private volatile int _generation;
    private Task? _loop;

    public JsConsumer(JsStream stream, string name, ConsumerConfig config, GoTime created, IConsumerStore? store)
    {
        Stream = stream;
        Name = name;
        _config = config;
        Created = created;
        _store = store;
        _transport = stream.Account.Service.Transport;
    }

    public JsStream Stream { get; }

    public string Name { get; }

    public GoTime Created { get; }

    public ConsumerConfig Config
    {
        get
        {
            lock (_lock)
            {
                return _config;
            }
        }
    }

    private Nats.Server.Accounts.Account Account => Stream.Account.Account;

    private long InactiveMillis => _config.InactiveThreshold > 0 ? _config.InactiveThreshold / 1_000_000 : 0;

    /// <summary>Go's selectStartingSeqNo, or the stored state of a recovered durable.</summary>
    public void Start(bool recovered)
    {
        lock (_lock)
        {
            // A recovered durable resumes from its store even with nothing delivered yet: its starting point
            // was stored when it was created (0 on an empty stream), and selecting it again would skip what
            // arrived since (messages kept for an offline MQTT session, for one).
            if (recovered && _store is not null)
            {
                LoadStateLocked(_store.State());
                // Everything pending was in flight when we stopped: redeliver it now rather than after ack_wait.
                foreach (var seq in _pending.Keys.Order())
                {
                    _redeliverQueue.Add(seq);
                }
            }
            else
            {
                SelectStart();
            }
        }
        Subscribe();
    }

    /// <summary>Under the lock: the position and pending deliveries of a stored state.</summary>
    private void LoadStateLocked(Storage.ConsumerState state)
    {
        _sseq = state.Delivered.Stream + 1;
        _dseq = state.Delivered.Consumer + 1;
        _ackFloorConsumer = state.AckFloor.Consumer;
        _ackFloorStream = state.AckFloor.Stream;
        _pending.Clear();
        _redelivered.Clear();
        _redeliverQueue.Clear();
        foreach (var (seq, pending) in state.Pending)
        {
            _pending[seq] = pending;
        }
        foreach (var (seq, count) in state.Redelivered)
        {
            _redelivered[seq] = count;
        }
    }

    /// <summary>The ack, interest and flow-control subscriptions of a delivering consumer.</summary>
    private void Subscribe()
    {
        var prefix = $"$JS.ACK.{Stream.Name}.{Name}.>";
        _subscriptions.Add(_transport.Subscribe(Account, prefix, OnAck));
        if (_config.IsPush)
        {
            Account.SubList.Inserted += OnInterest;
        }
        if (_config.IsPush && _config.FlowControl)
        {
            _subscriptions.Add(_transport.Subscribe(Account, $"$JS.FC.{Stream.Name}.{Name}.*", OnFlowControl));
        }
    }

    /// <summary>Starts delivering. The create API calls it after answering, so clients see the create
    /// answer (with its num_pending) before the first message, as Go's initialInfo snapshot gives them.</summary>
    public void Run()
    {
        lock (_lock)
        {
            if (_loop is not null || _stopped)
            {
                return;
            }
            _pacer.Start(_config, Stream.Store.FastState().LastSeq, RateBurst());
            var generation = _generation;
            _loop = Task.Run(() => RunAsync(generation));
        }
    }

    private void SelectStart()
    {
        var store = Stream.Store;
        var state = store.FastState();
        var filter = _config.Filter;
        if (_config.OptStartSeq == 0)
        {
            switch (_config.DeliverPolicy)
            {
                case DeliverPolicy.All:
                    _sseq = state.FirstSeq;
                    break;
                case DeliverPolicy.Last:
                    _sseq = state.LastSeq;
                    if (filter.Length > 0)
                    {
                        _sseq = store.FilteredState(1, filter).Last;
                    }
                    break;
                case DeliverPolicy.LastPerSubject:
                    var lasts = store.MultiLastSeqs([filter.Length == 0 ? ">" : filter], 0, 0);
                    if (lasts.Length > 0)
                    {
                        _lastPerSubject = new Queue<ulong>(lasts);
                        _lastPerSubjectResume = state.LastSeq;
                        _sseq = lasts[0];
                    }
                    else
                    {
                        _sseq = state.LastSeq;
                    }
                    break;
                case DeliverPolicy.ByStartTime when _config.OptStartTime is { } time:
                    _sseq = store.GetSeqFromTime(time.ToDateTime());
                    break;
                default:
                    _sseq = state.LastSeq + 1;
                    break;
            }
        }
        else
        {
            _sseq = _config.OptStartSeq;
        }
        if (state.FirstSeq == 0)
        {
            _sseq = 1;
        }
        else if (_sseq < state.FirstSeq)
        {
            _sseq = state.FirstSeq;
        }
        else if (_sseq > state.LastSeq)
        {
            _sseq = state.LastSeq + 1;
        }
        _dseq = 1;
        // Go 2.9.10 answers a new consumer's ack floor as 0/0 whatever its start.
        _ackFloorConsumer = 0;
        _ackFloorStream = 0;
        _store?.SetStarting(_sseq - 1);
    }

    /// <summary>New messages, acks, requests: run the delivery loop soon.</summary>
    public void Signal()
    {
        if (_wake.CurrentCount == 0)
        {
            try
            {
                _wake.Release();
            }
            catch (SemaphoreFullException)
            {
            }
        }
    }

    private async Task RunAsync(int generation)
    {
        while (!_stopped && generation == _generation)
        {
            long wait;
            bool expired;
            try
            {
                (wait, expired) = Pump();
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                Stream.Account.Service.Logger.LogWarning("JetStream consumer '{Stream} > {Consumer}' delivery failed: {Error}", Stream.LogName, Name, e.Message);
                (wait, expired) = (1000, false);
            }
            if (expired)
            {
                if (Stream.Consumers.Delete(this, advisory: true))
                {
                    Expired?.Invoke(this);
                }
                return;
            }
            if (_stalls.Count > 0)
            {
                await WaitForStalledAsync().ConfigureAwait(false);
                continue;
            }
            try
            {
                await _wake.WaitAsync(TimeSpan.FromMilliseconds(Math.Clamp(wait, 1, 60_000))).ConfigureAwait(false);
            }
            catch (ObjectDisposedException)
            {
                return;
            }
        }
    }

    /// <summary>Client flow control for a consumer: the next pass starts once every subscriber the last one
    /// filled has drained; one that stops reading is cut by its own stuck bound, never for being fast-fed.</summary>
    private async Task WaitForStalledAsync()
    {
        foreach (var subscriber in _stalls)
        {
            await subscriber.WaitUntilDrainedAsync().ConfigureAwait(false);
        }
        _stalls.Clear();
    }

    public void Update(ConsumerConfig config)
    {
        lock (_lock)
        {
            if (config.RateLimit != _config.RateLimit)
            {
                _pacer.SetRate(config.RateLimit, RateBurst());
            }
            _config = config;
            _pendingCheckAt = 0; // ack_wait or backoff may have changed
        }
        _store?.UpdateConfig(StoreConfig(config, Created));
        Signal();
    }

    internal static ConsumerStoreConfig StoreConfig(ConsumerConfig config, GoTime created) => new()
    {
        AckPolicy = config.AckPolicy switch { AckPolicyKind.None => AckPolicy.None, AckPolicyKind.All => AckPolicy.All, _ => AckPolicy.Explicit },
        MaxDeliver = config.MaxDeliver,
        Metadata = System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(new ConsumerMeta { Created = created, Config = config }, ConsumerJson.Context.ConsumerMeta),
    };

    /// <summary>The consumer's info; <paramref name="type"/> is the API response type, null where the info is
    /// embedded in another answer (a consumer list, /jsz), which prints no type.</summary>
    public ConsumerInfo Info(string? type = null)
    {
        lock (_lock)
        {
            ExpireWaiting(Environment.TickCount64, sendTimeouts: true);
            return new ConsumerInfo
            {
                Type = type,
                Stream = Stream.Name,
                Name = Name,
                Created = Created,
                Config = _config,
                Delivered = new SequenceInfo { Consumer = _dseq - 1, Stream = _sseq - 1, Last = _lastDelivered == 0 ? null : new GoTime(_lastDelivered) },
                AckFloor = new SequenceInfo { Consumer = _ackFloorConsumer, Stream = _ackFloorStream, Last = _lastAcked == 0 ? null : new GoTime(_lastAcked) },
                NumAckPending = _pending.Count,
                NumRedelivered = _redelivered.Count,
                NumWaiting = _config.IsPush ? 0 : _waiting.Count,
                NumPending = NumPending(),
                PushBound = _config.IsPush && _pushActive,
                Cluster = ClusterInfo(),
            };
        }
    }

    private ulong NumPending()
    {
        var filter = _config.Filter;
        if (_config.DeliverPolicy == DeliverPolicy.LastPerSubject)
        {
            ulong count = 0;
            foreach (var (_, state) in Stream.Store.SubjectsState(filter))
            {
                if (_sseq <= state.Last)
                {
                    count++;
                }
            }
            return count;
        }
        return Stream.Store.FilteredState(_sseq, filter).Msgs;
    }

    /// <summary>Go's needAck: whether this consumer still holds <paramref name="seq"/> (interest retention).</summary>
    public bool NeedsAck(ulong seq, string subject)
    {
        lock (_lock)
        {
            var filter = _config.Filter;
            if (filter.Length > 0 && !SubjectRules.Matches(subject, filter))
            {
                return false;
            }
            if (seq <= _ackFloorStream)
            {
                return false;
            }
            // Go: ack none and all need everything above the ack floor, which starts at 0 even for a later start.
            if (_config.AckPolicy != AckPolicyKind.Explicit)
            {
                return true;
            }
            return seq >= _sseq || _pending.ContainsKey(seq);
        }
    }

    /// <summary>The stream sequence every delivery up to which is acknowledged (Go's asflr).</summary>
    public ulong AckFloorStream
    {
        get
        {
            lock (_lock)
            {
                return _ackFloorStream;
            }
        }
    }

    public bool FilterMatches(string subject)
    {
        var filter = Config.Filter;
        return filter.Length == 0 || SubjectRules.Matches(subject, filter);
    }

    private void OnInterest(byte[] subject)
    {
        if (_config.DeliverSubject is { } deliver && SubjectRules.Matches(deliver, System.Text.Encoding.UTF8.GetString(subject)))
        {
            Signal();
        }
    }

    /// <summary>Stops delivery; pending pull requests hear "409 Consumer Deleted" when <paramref name="deleted"/>.</summary>
    public void Stop(bool deleted)
    {
        _stopped = true;
        Account.SubList.Inserted -= OnInterest;
        foreach (var subscription in _subscriptions)
        {
            subscription.Dispose();
        }
        _subscriptions.Clear();
        lock (_lock)
        {
            if (deleted)
            {
                foreach (var request in _waiting)
                {
                    SendStatus(request.ReplyBytes, "NATS/1.0 409 Consumer Deleted\r\n\r\n");
                }
            }
            _waiting.Clear();
        }
        Signal();
        if (deleted)
        {
            _store?.Delete();
        }
        else
        {
            _store?.Stop();
        }
    }

    public void Dispose() => Stop(deleted: false);

    private void SendStatus(byte[] to, string header) =>
        _transport.Publish(Account, to, default, Encoding.ASCII.GetBytes(header), default);

    // Delivery builds the ack reply and the message subject in one reused buffer (under _lock), so a
    // delivered message allocates no strings or byte arrays.
    private byte[] _deliveryScratch = new byte[256];
    private byte[]? _ackPrefix;
    private byte[]? _deliverSubjectBytes;
    private string? _deliverSubjectOf;

    private byte[] DeliveryScratch(int extra)
    {
        _ackPrefix ??= Encoding.UTF8.GetBytes($"$JS.ACK.{Stream.Name}.{Name}.");
        var needed = _ackPrefix.Length + extra;
        if (_deliveryScratch.Length < needed)
        {
            _deliveryScratch = new byte[Math.Max(needed, _deliveryScratch.Length * 2)];
        }
        return _deliveryScratch;
    }

    /// <summary><c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;dc&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c> into
    /// <paramref name="buffer"/> (sized by <see cref="DeliveryScratch"/>); returns its length.</summary>
    private int FormatAckReply(Span<byte> buffer, ulong dc, ulong sseq, ulong dseq, long ts, ulong pending)
    {
        var prefix = _ackPrefix!;
        prefix.CopyTo(buffer);
        var length = prefix.Length;
        Utf8Formatter.TryFormat(dc, buffer[length..], out var written);
        length += written;
        buffer[length++] = (byte)'.';
        Utf8Formatter.TryFormat(sseq, buffer[length..], out written);
        length += written;
        buffer[length++] = (byte)'.';
        Utf8Formatter.TryFormat(dseq, buffer[length..], out written);
        length += written;
        buffer[length++] = (byte)'.';
        Utf8Formatter.TryFormat(ts, buffer[length..], out written);
        length += written;
        buffer[length++] = (byte)'.';
        Utf8Formatter.TryFormat(pending, buffer[length..], out written);
        return length + written;
    }

    private byte[] DeliverSubjectBytes()
    {
        var subject = _config.DeliverSubject!;
        if (!ReferenceEquals(subject, _deliverSubjectOf))
        {
            _deliverSubjectBytes = Encoding.UTF8.GetBytes(subject);
            _deliverSubjectOf = subject;
        }
        return _deliverSubjectBytes!;
    }
}
