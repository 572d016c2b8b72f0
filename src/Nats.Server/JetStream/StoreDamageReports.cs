using System.Buffers;
using System.Collections.Concurrent;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts.SystemEvents;
using Nats.Server.JetStream.Api;
using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>
/// Damage the file store finds (at recovery, on a read, by a scrub) becomes an advisory on
/// <c>$JS.EVENT.ADVISORY.STREAM.DAMAGED.&lt;stream&gt;</c> (type <c>io.nats.jetstream.advisory.v1.stream_damaged</c>)
/// and a count in /jsz. Go 2.9.10 has no equivalent: it drops damaged records silently and only shows
/// <c>state.lost</c> in stream info. The store calls <see cref="Report"/> under its lock, so advisories are
/// queued and sent from the thread pool; those found while recovering wait until every stream is open,
/// so a stream capturing <c>$JS.EVENT.ADVISORY.&gt;</c> keeps them.
/// </summary>
internal sealed class StoreDamageReports(JetStreamService service)
{
    public const string AdvisoryType = "io.nats.jetstream.advisory.v1.stream_damaged";
    public const string SubjectPrefix = "$JS.EVENT.ADVISORY.STREAM.DAMAGED.";

    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = GoJsonEncoder.Instance };
    public const string FailedAdvisoryType = "io.nats.jetstream.advisory.v1.stream_store_failed";
    public const string FailedSubjectPrefix = "$JS.EVENT.ADVISORY.STREAM.STORE_FAILED.";

    private readonly ConcurrentQueue<(JsAccount Account, string Stream, StoreDamage? Damage, string? Failure)> _pending = new();
    private long _failures;
    private readonly EventIds _ids = new();
    private volatile bool _started;
    private int _draining;
    private long _events;

    /// <summary>Damage events reported since start (recovery included).</summary>
    public ulong Events => (ulong)Interlocked.Read(ref _events);

    /// <summary>Stores that failed a write or fsync since start (each refuses new messages until reloaded).</summary>
    public ulong Failures => (ulong)Interlocked.Read(ref _failures);

    public void Report(JsAccount account, string stream, StoreDamage damage)
    {
        Interlocked.Increment(ref _events);
        Enqueue((account, stream, damage, null));
    }

    /// <summary>A store's write or fsync failed (called under its lock, once per store): logged as an
    /// error at once, counted in /jsz, and announced on <c>$JS.EVENT.ADVISORY.STREAM.STORE_FAILED.&lt;stream&gt;</c>.</summary>
    public void ReportFailure(JsAccount account, string stream, string description)
    {
        Interlocked.Increment(ref _failures);
        service.Logger.LogError("Filestore [{Stream}] {Text}", stream, description);
        Enqueue((account, stream, null, description));
    }

    private void Enqueue((JsAccount Account, string Stream, StoreDamage? Damage, string? Failure) item)
    {
        _pending.Enqueue(item);
        if (_started)
        {
            Schedule();
        }
    }

    /// <summary>Every stream is recovered and capturing: send what recovery found, then send as found.</summary>
    public void Start()
    {
        _started = true;
        Schedule();
    }

    private void Schedule()
    {
        if (Interlocked.CompareExchange(ref _draining, 1, 0) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(_ => Drain(), null);
        }
    }

    private void Drain()
    {
        while (_pending.TryDequeue(out var item))
        {
            if (item.Damage is { } damage)
            {
                Publish(item.Account, item.Stream, damage);
            }
            else
            {
                PublishFailure(item.Account, item.Stream, item.Failure!);
            }
        }
        Volatile.Write(ref _draining, 0);
        if (!_pending.IsEmpty)
        {
            Schedule();
        }
    }

    private void PublishFailure(JsAccount account, string stream, string description)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("type", FailedAdvisoryType);
            json.WriteString("id", _ids.Next());
            json.WriteString("timestamp", GoTime.Now().ToString());
            json.WriteString("stream", stream);
            json.WriteString("description", description);
            if (!string.IsNullOrEmpty(service.Options.Domain))
            {
                json.WriteString("domain", service.Options.Domain);
            }
            json.WriteEndObject();
        }
        Send(account, FailedSubjectPrefix + stream, buffer);
    }

    private void Send(JsAccount account, string subject, ArrayBufferWriter<byte> buffer)
    {
        try
        {
            service.Transport.PublishAdvisory(account.Account, subject, buffer.WrittenSpan);
        }
        catch (ObjectDisposedException)
        {
            // Shutting down: nobody is left to tell.
        }
    }

    private void Publish(JsAccount account, string stream, StoreDamage damage)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("type", AdvisoryType);
            json.WriteString("id", _ids.Next());
            json.WriteString("timestamp", GoTime.Now().ToString());
            json.WriteString("stream", stream);
            if (damage.Block > 0)
            {
                json.WriteNumber("block", damage.Block);
            }
            if (damage.FirstSeq > 0)
            {
                json.WriteNumber("first_seq", damage.FirstSeq);
                json.WriteNumber("last_seq", damage.LastSeq);
            }
            json.WriteNumber("bytes", damage.Bytes);
            json.WriteString("description", damage.Description);
            if (!string.IsNullOrEmpty(service.Options.Domain))
            {
                json.WriteString("domain", service.Options.Domain);
            }
            json.WriteEndObject();
        }
        Send(account, SubjectPrefix + stream, buffer);
    }
}
