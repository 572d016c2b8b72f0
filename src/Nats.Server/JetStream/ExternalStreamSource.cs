using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Nats.Server.Hosting;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream;

/// <summary>
/// A mirror or source whose origin is reached through an API prefix (<c>external.api</c>, e.g. another JetStream
/// domain across a leaf connection), as Go's setupMirrorConsumer/setSourceConsumer: a flow-controlled push consumer
/// is created on the origin through <c>&lt;api&gt;.CONSUMER.CREATE</c>, its deliveries carry the origin's sequences
/// in their <c>$JS.ACK</c> reply, and a gap, a lost heartbeat or three silent seconds start a new consumer from the
/// last sequence taken. Only standalone (unreplicated) streams are fed this way.
/// </summary>
internal sealed class ExternalStreamSource : IDisposable
{
    private const string SourceHeader = "Nats-Stream-Source";
    private const string LastConsumerHeader = "Nats-Last-Consumer";
    private const string StalledHeader = "Nats-Consumer-Stalled";
    private static readonly TimeSpan HealthCheck = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan RetryThreshold = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan CreateTimeout = TimeSpan.FromSeconds(5);

    private readonly JsStream _target;
    private readonly StreamSource _source;
    private readonly bool _mirror;
    private readonly CancellationTokenSource _stop = new();

    // Go's sourceInfo: the consumer feeding us and the last sequences taken from it.
    private string _consumer = "";
    private ulong _deliverSeq;
    private ulong _streamSeq;
    // Go's si.lag and si.last, read by STREAM.INFO from other threads.
    private long _lag;
    private long _lastHeardTicks;

    public ExternalStreamSource(JsStream target, StreamSource source, bool mirror)
    {
        _target = target;
        _source = source;
        _mirror = mirror;
        IndexName = $"{source.Name}:{NameHash.Of(source.External!.ApiPrefix)}";
        _ = Task.Run(RunAsync);
    }

    /// <summary>Go's iname: the origin's name and a hash of its API prefix, as written in <c>Nats-Stream-Source</c>.</summary>
    public string IndexName { get; }

    public JsStream Target => _target;

    public bool IsMirror => _mirror;

    /// <summary>Go's sourceInfo for STREAM.INFO: <c>lag</c> is the origin's pending count of the last delivery taken, less
    /// one; <c>active</c> the nanoseconds since anything (a delivery, heartbeat or flow control) came from the current
    /// consumer, -1 before any consumer was set up.</summary>
    public StreamSourceInfo Info()
    {
        var heard = Volatile.Read(ref _lastHeardTicks);
        return new StreamSourceInfo
        {
            Name = _source.Name,
            External = new ExternalStream { ApiPrefix = _source.External!.ApiPrefix, DeliverPrefix = _source.External.DeliverPrefix },
            Lag = (ulong)Volatile.Read(ref _lag),
            Active = heard == 0 ? -1 : (DateTime.UtcNow.Ticks - heard) * 100,
        };
    }

    public void Dispose() => _stop.Cancel();

    private JetStreamTransport Transport => _target.Account.Service.Transport;

    private Accounts.Account Account => _target.Account.Account;

    private async Task RunAsync()
    {
        var token = _stop.Token;
        var lastRequest = DateTime.MinValue;
        while (!token.IsCancellationRequested)
        {
            var wait = RetryThreshold - (DateTime.UtcNow - lastRequest);
            try
            {
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, token);
                }
                lastRequest = DateTime.UtcNow;
                await RunConsumerAsync(token);
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                _target.Account.Service.Logger.LogWarning("JetStream {Kind} of {Stream} from '{Origin}' failed: {Error}",
                    _mirror ? "mirror" : "source", _target.LogName, _source.Name, e.Message);
            }
        }
    }

    /// <summary>One consumer's life: create it, take its deliveries until it fails or stalls.</summary>
    private async Task RunConsumerAsync(CancellationToken token)
    {
        var inbox = Channel.CreateUnbounded<Inbound>(new UnboundedChannelOptions { SingleReader = true });
        var answer = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        var ext = _source.External!;
        var kind = _mirror ? "M" : "S";
        var deliverSubject = string.IsNullOrEmpty(ext.DeliverPrefix)
            ? $"$JS.{kind}.{Random()}"
            : $"{ext.DeliverPrefix}.{kind}.{Random()}".Replace("..", ".", StringComparison.Ordinal);
        var reply = $"$JSC.R.{Random()}";
        var (request, subject) = CreateRequest(deliverSubject);

        // The deliver subscription comes first: the origin may deliver as soon as it has the request.
        using var deliveries = Transport.Subscribe(Account, deliverSubject, (_, s, r, h, p) =>
            inbox.Writer.TryWrite(new Inbound(Encoding.UTF8.GetString(s), Encoding.UTF8.GetString(r), h.ToArray(), p.ToArray())));
        using (Transport.Subscribe(Account, reply, (_, _, _, _, p) => answer.TrySetResult(p.ToArray())))
        {
            Transport.Publish(Account, Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(reply), default, request);
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
            timeout.CancelAfter(CreateTimeout);
            byte[] response;
            try
            {
                response = await answer.Task.WaitAsync(timeout.Token);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                return;
            }
            if (!Started(response))
            {
                return;
            }
        }

        var last = DateTime.UtcNow;
        // Go's processMirrorMsgs/processSourceMsgs count a new consumer as just heard from.
        Volatile.Write(ref _lastHeardTicks, last.Ticks);
        while (!token.IsCancellationRequested)
        {
            using var tick = CancellationTokenSource.CreateLinkedTokenSource(token);
            tick.CancelAfter(HealthCheck);
            Inbound message;
            try
            {
                message = await inbox.Reader.ReadAsync(tick.Token);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                if (DateTime.UtcNow - last > 3 * HealthCheck)
                {
                    return;
                }
                continue;
            }
            if (!Take(message, ref last))
            {
                return;
            }
        }
    }

    /// <summary>The consumer create request and its subject (Go's CreateConsumerRequest for a mirror or source).</summary>
    private (byte[] Request, string Subject) CreateRequest(string deliverSubject)
    {
        string policy;
        ulong startSeq = 0;
        GoTime? startTime = null;
        var state = _target.Store.State();
        if (_mirror)
        {
            startSeq = state.LastSeq + 1;
            if (state.LastSeq == 0)
            {
                startSeq = _source.OptStartSeq;
                startTime = startSeq == 0 ? _source.OptStartTime : null;
            }
        }
        else
        {
            var position = SourcedPosition();
            if (position > 0)
            {
                startSeq = position + 1;
            }
            else if (_source.OptStartSeq > 0)
            {
                startSeq = _source.OptStartSeq;
            }
            else
            {
                startTime = _source.OptStartTime;
            }
        }
        policy = startSeq > 0 ? "by_start_sequence" : startTime is not null ? "by_start_time" : "all";

        var filter = _source.FilterSubject;
        string? name = null;
        var subject = $"$JS.API.CONSUMER.CREATE.{_source.Name}";
        if (!string.IsNullOrEmpty(filter))
        {
            name = $"{(_mirror ? "mirror" : "src")}-{NameHash.Of(Guid.NewGuid().ToString("N"))}";
            subject = $"$JS.API.CONSUMER.CREATE.{_source.Name}.{name}.{filter}";
        }
        var ext = _source.External!;
        subject = (ext.ApiPrefix + subject["$JS.API".Length..]).Replace("..", ".", StringComparison.Ordinal);

        var buffer = new ArrayBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("stream_name", _source.Name);
            json.WriteStartObject("config");
            if (name is not null)
            {
                json.WriteString("name", name);
            }
            json.WriteString("deliver_policy", policy);
            if (startSeq > 0)
            {
                json.WriteNumber("opt_start_seq", startSeq);
            }
            if (startTime is { } time)
            {
                json.WriteString("opt_start_time", time.ToDateTime().ToString("O", CultureInfo.InvariantCulture));
            }
            json.WriteString("ack_policy", "none");
            json.WriteNumber("ack_wait", (long)TimeSpan.FromHours(22).TotalNanoseconds);
            json.WriteNumber("max_deliver", 1);
            if (!string.IsNullOrEmpty(filter))
            {
                json.WriteString("filter_subject", filter);
            }
            json.WriteString("replay_policy", "instant");
            json.WriteBoolean("flow_control", true);
            json.WriteBoolean("direct", true);
            json.WriteString("deliver_subject", deliverSubject);
            json.WriteNumber("idle_heartbeat", (long)HealthCheck.TotalNanoseconds);
            json.WriteEndObject();
            json.WriteEndObject();
        }
        return (buffer.WrittenSpan.ToArray(), subject);
    }

    /// <summary>Reads the create response: the consumer's name and where it starts.</summary>
    private bool Started(byte[] response)
    {
        using var doc = JsonDocument.Parse(response);
        var root = doc.RootElement;
        if (root.TryGetProperty("error", out var error) || !root.TryGetProperty("name", out var name))
        {
            _target.Account.Service.Logger.LogWarning("JetStream error response for create {Kind} consumer: {Error}",
                _mirror ? "mirror" : "source", root.TryGetProperty("error", out error) ? error.GetRawText() : Encoding.UTF8.GetString(response));
            return false;
        }
        var delivered = root.TryGetProperty("delivered", out var d) && d.TryGetProperty("stream_seq", out var s) ? s.GetUInt64() : 0;
        if (_mirror)
        {
            // The origin no longer has what we would take next (expired, purged): the mirror skips to its start.
            lock (_target.Gate)
            {
                var last = _target.Store.State().LastSeq;
                if (delivered > last)
                {
                    _target.Store.SkipMsgs(last + 1, delivered - last);
                    _target.Ingest.Reset();
                }
            }
        }
        _consumer = name.GetString() ?? "";
        _deliverSeq = 0;
        _streamSeq = delivered;
        return true;
    }

    /// <summary>One delivery (Go's processInboundMirrorMsg / processInboundSourceMsg); false asks for a new consumer.</summary>
    private bool Take(Inbound message, ref DateTime last)
    {
        var control = message.Payload.Length == 0 && message.Headers.AsSpan().StartsWith("NATS/1.0 100 "u8);
        if (control)
        {
            last = DateTime.UtcNow;
            Volatile.Write(ref _lastHeardTicks, last.Ticks);
            if (message.Reply.Length > 0)
            {
                // Flow control: the origin sends more once we answered.
                Transport.Publish(Account, Encoding.UTF8.GetBytes(message.Reply), default, default, default);
                return true;
            }
            if (NatsHeaders.TryGetSequence(message.Headers, LastConsumerHeader, out var lastDelivered) && lastDelivered > 0
                && lastDelivered != _deliverSeq)
            {
                return false;
            }
            if (NatsHeaders.Get(message.Headers, StalledHeader) is { Length: > 0 } stalled)
            {
                Transport.Publish(Account, Encoding.UTF8.GetBytes(stalled), default, default, default);
            }
            return true;
        }
        if (!TryParseAck(message.Reply, out var consumer, out var delivered, out var sseq, out var dseq, out var timestamp, out var pending)
            || consumer != _consumer)
        {
            // A delivery of an earlier consumer of ours.
            return true;
        }
        last = DateTime.UtcNow;
        Volatile.Write(ref _lastHeardTicks, last.Ticks);
        if (delivered > 1)
        {
            return true;
        }
        return _mirror ? TakeMirrored(message, sseq, dseq, timestamp, pending) : TakeSourced(message, sseq, dseq, pending);
    }

    private bool TakeMirrored(Inbound message, ulong sseq, ulong dseq, long timestamp, ulong pending)
    {
        if (sseq <= _streamSeq)
        {
            return true;
        }
        if (sseq != _streamSeq + 1 && dseq != _deliverSeq + 1)
        {
            return false;
        }
        SetLag(pending);
        lock (_target.Gate)
        {
            var last = _target.Store.State().LastSeq;
            if (sseq <= last)
            {
                _streamSeq = sseq;
                _deliverSeq = dseq;
                return true;
            }
            if (sseq > last + 1)
            {
                // Deleted or expired in the origin: the mirror keeps the origin's numbering.
                _target.Store.SkipMsgs(last + 1, sseq - last - 1);
            }
            _target.Store.StoreRawMsg(message.Subject, message.Headers, message.Payload, sseq, timestamp);
            _target.Ingest.Reset();
        }
        _streamSeq = sseq;
        _deliverSeq = dseq;
        _target.Account.OnStored(_target, message.Subject, sseq);
        return true;
    }

    /// <summary>Go counts the delivery itself in its pending count.</summary>
    private void SetLag(ulong pending) => Volatile.Write(ref _lag, (long)(pending == 0 ? 0 : pending - 1));

    private bool TakeSourced(Inbound message, ulong sseq, ulong dseq, ulong pending)
    {
        if (dseq != _deliverSeq + 1)
        {
            return dseq <= _deliverSeq;
        }
        SetLag(pending);
        _deliverSeq = dseq;
        _streamSeq = sseq;
        try
        {
            _target.Ingest.Process(message.Subject, default, WithSourceHeader(message.Headers, IndexName, sseq), message.Payload);
        }
        catch (Storage.StoreException)
        {
            // A full target with discard new refuses; the position still moves on, as Go's source does.
        }
        return true;
    }

    /// <summary>The last origin sequence this source took, from the newest message carrying our index name.</summary>
    private ulong SourcedPosition()
    {
        if (_streamSeq > 0)
        {
            return _streamSeq;
        }
        var reuse = new Storage.StoredMessage();
        var seq = _target.Store.State().LastSeq;
        for (var message = seq > 0 ? _target.Store.LoadPrevMsg("", seq, reuse) : null; message is not null && message.Sequence > 0;
             message = message.Sequence > 1 ? _target.Store.LoadPrevMsg("", message.Sequence - 1, reuse) : null)
        {
            if (NatsHeaders.Get(message.Header.Span, SourceHeader) is { } value)
            {
                var parts = value.Split(' ');
                if (parts.Length >= 2 && parts[0] == IndexName && ulong.TryParse(parts[1], out var sourced))
                {
                    return sourced;
                }
            }
        }
        return 0;
    }

    /// <summary>Parses <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;delivered&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c>
    /// from its end, so the longer forms with a domain and account hash parse too.</summary>
    private static bool TryParseAck(string reply, out string consumer, out ulong delivered, out ulong sseq, out ulong dseq, out long timestamp,
        out ulong pending)
    {
        consumer = "";
        delivered = sseq = dseq = pending = 0;
        timestamp = 0;
        var tokens = reply.Split('.');
        if (tokens.Length < 9 || tokens[0] != "$JS" || tokens[1] != "ACK")
        {
            return false;
        }
        var n = tokens.Length;
        consumer = tokens[n - 6];
        return ulong.TryParse(tokens[n - 5], out delivered) && ulong.TryParse(tokens[n - 4], out sseq)
            && ulong.TryParse(tokens[n - 3], out dseq) && long.TryParse(tokens[n - 2], out timestamp) && ulong.TryParse(tokens[n - 1], out pending);
    }

    private static byte[] WithSourceHeader(byte[] header, string origin, ulong seq)
    {
        var line = $"{SourceHeader}: {origin} {seq}\r\n";
        if (header.Length == 0)
        {
            return Encoding.UTF8.GetBytes($"NATS/1.0\r\n{line}\r\n");
        }
        // A chained source's header names the nearer origin only (Go's removeHeaderIfPresent).
        var lines = Encoding.UTF8.GetString(header).Split("\r\n").Where(l => !l.StartsWith(SourceHeader + ":", StringComparison.Ordinal) && l.Length > 0);
        return Encoding.UTF8.GetBytes(string.Join("\r\n", lines) + "\r\n" + line + "\r\n");
    }

    private static string Random() => NameHash.Of(Guid.NewGuid().ToString("N"));

    private readonly record struct Inbound(string Subject, string Reply, byte[] Headers, byte[] Payload);
}
