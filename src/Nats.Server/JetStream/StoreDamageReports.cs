using System.Buffers;
using System.Collections.Concurrent;
using System.Text.Json;
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
    private readonly ConcurrentQueue<(JsAccount Account, string Stream, StoreDamage Damage)> _pending = new();
    private readonly EventIds _ids = new();
    private volatile bool _started;
    private int _draining;
    private long _events;

    /// <summary>Damage events reported since start (recovery included).</summary>
    public ulong Events => (ulong)Interlocked.Read(ref _events);

    public void Report(JsAccount account, string stream, StoreDamage damage)
    {
        Interlocked.Increment(ref _events);
        _pending.Enqueue((account, stream, damage));
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
            Publish(item.Account, item.Stream, item.Damage);
        }
        Volatile.Write(ref _draining, 0);
        if (!_pending.IsEmpty)
        {
            Schedule();
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
        try
        {
            service.Transport.PublishAdvisory(account.Account, SubjectPrefix + stream, buffer.WrittenSpan);
        }
        catch (ObjectDisposedException)
        {
            // Shutting down: nobody is left to tell.
        }
    }
}
