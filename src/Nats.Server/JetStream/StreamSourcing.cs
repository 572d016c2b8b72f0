using System.Text;
using Nats.Server.JetStream.Api;
using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>
/// Mirrors and sources between streams of the same server and account. A mirror copies its origin's
/// messages with their sequences and times; a source appends the origin's messages (optionally
/// filtered) with a <c>Nats-Stream-Source</c> header naming origin and sequence, from which the
/// position is recovered after a restart. Catch-up happens when the relation is attached; afterwards
/// every message stored in an origin is forwarded right after it is stored.
/// </summary>
internal sealed class StreamSourcing
{
    private const string SourceHeader = "Nats-Stream-Source";
    private readonly Lock _lock = new();

    // origin stream → (target stream, source index or -1 for a mirror)
    private readonly Dictionary<JsStream, List<(JsStream Target, StreamSource Source, bool Mirror)>> _links = [];
    private readonly Dictionary<(JsStream Target, string Origin), ulong> _positions = [];

    // target stream → its mirror or sources reached through an API prefix (another domain or account)
    private readonly Dictionary<JsStream, List<ExternalStreamSource>> _external = [];

    public void Attach(JsAccount account, JsStream target)
    {
        var config = target.Config;
        AttachExternal(target);
        if (config.Mirror is { External: null } mirror)
        {
            Link(account, target, mirror, true);
        }
        foreach (var source in config.Sources ?? [])
        {
            if (source.External is null)
            {
                Link(account, target, source, false);
            }
        }
        // Streams that name this one as their origin and were waiting for it.
        foreach (var other in account.Streams())
        {
            if (other == target)
            {
                continue;
            }
            if (other.Config.Mirror is { External: null } m && m.Name == target.Name)
            {
                Link(account, other, m, true);
            }
            foreach (var s in other.Config.Sources ?? [])
            {
                if (s.External is null && s.Name == target.Name)
                {
                    Link(account, other, s, false);
                }
            }
        }
    }

    public void Detach(JsAccount account, JsStream stream)
    {
        DetachExternal(stream);
        lock (_lock)
        {
            _links.Remove(stream);
            foreach (var list in _links.Values)
            {
                list.RemoveAll(l => l.Target == stream);
            }
            foreach (var key in _positions.Keys.Where(k => k.Target == stream).ToList())
            {
                _positions.Remove(key);
            }
        }
    }

    /// <summary>Re-attaches after a config update changed the stream's sources.</summary>
    public void Reattach(JsAccount account, JsStream target)
    {
        DetachExternal(target);
        lock (_lock)
        {
            foreach (var list in _links.Values)
            {
                list.RemoveAll(l => l.Target == target);
            }
        }
        Attach(account, target);
    }

    /// <summary>STREAM.INFO's <c>mirror</c> and <c>sources</c> for what feeds <paramref name="target"/> from another domain or
    /// account (Go's mirrorInfo/sourcesInfo); sources of the same account are copied synchronously and not listed.</summary>
    public (StreamSourceInfo? Mirror, List<StreamSourceInfo>? Sources) ExternalInfo(JsStream target)
    {
        ExternalStreamSource[] links;
        lock (_lock)
        {
            if (!_external.TryGetValue(target, out var list))
            {
                return (null, null);
            }
            links = [.. list];
        }
        var sources = links.Where(l => !l.IsMirror).Select(l => l.Info()).ToList();
        return (links.FirstOrDefault(l => l.IsMirror)?.Info(), sources.Count > 0 ? sources : null);
    }

    /// <summary>Stops what feeds <paramref name="target"/> from another domain or account.</summary>
    public void DetachExternal(JsStream target)
    {
        List<ExternalStreamSource>? links;
        lock (_lock)
        {
            _external.Remove(target, out links);
        }
        foreach (var link in links ?? [])
        {
            link.Dispose();
        }
    }

    private void AttachExternal(JsStream target)
    {
        // A replicated stream's external sources would need its group's leader to run them: not yet.
        if (target.Group is not null || target.Config.Replicas > 1)
        {
            return;
        }
        var config = target.Config;
        var links = new List<ExternalStreamSource>();
        if (config.Mirror is { External: not null } mirror)
        {
            links.Add(new ExternalStreamSource(target, mirror, mirror: true));
        }
        foreach (var source in config.Sources ?? [])
        {
            if (source.External is not null)
            {
                links.Add(new ExternalStreamSource(target, source, mirror: false));
            }
        }
        if (links.Count == 0)
        {
            return;
        }
        lock (_lock)
        {
            if (_external.Remove(target, out var old))
            {
                old.ForEach(l => l.Dispose());
            }
            _external[target] = links;
        }
    }

    public void OnStored(JsAccount account, JsStream origin, string subject, ulong seq)
    {
        List<(JsStream Target, StreamSource Source, bool Mirror)>? targets;
        lock (_lock)
        {
            if (!_links.TryGetValue(origin, out var list) || list.Count == 0)
            {
                return;
            }
            targets = [.. list];
        }
        foreach (var (target, source, isMirror) in targets)
        {
            CatchUp(origin, target, source, isMirror);
        }
    }

    private void Link(JsAccount account, JsStream target, StreamSource source, bool isMirror)
    {
        var origin = account.FindStream(source.Name);
        if (origin is null)
        {
            return;
        }
        lock (_lock)
        {
            if (!_links.TryGetValue(origin, out var list))
            {
                _links[origin] = list = [];
            }
            if (list.Any(l => l.Target == target && l.Source.Name == source.Name))
            {
                return;
            }
            list.Add((target, source, isMirror));
        }
        CatchUp(origin, target, source, isMirror);
    }

    /// <summary>Copies every origin message the target has not taken yet.</summary>
    private void CatchUp(JsStream origin, JsStream target, StreamSource source, bool isMirror)
    {
        lock (target.Gate)
        {
            var next = NextSequence(origin, target, source, isMirror);
            var filter = source.FilterSubject ?? "";
            var reuse = new StoredMessage();
            for (var message = origin.Store.LoadNextMsg(filter, next, reuse); message is not null;
                 message = origin.Store.LoadNextMsg(filter, message.Sequence + 1, reuse))
            {
                if (isMirror)
                {
                    var last = target.Store.State().LastSeq;
                    if (message.Sequence > last + 1)
                    {
                        target.Store.SkipMsgs(last + 1, message.Sequence - last - 1);
                    }
                    target.Store.StoreRawMsg(message.Subject, message.Header.Span, message.Data.Span, message.Sequence, message.Timestamp);
                    target.Ingest.Reset();
                }
                else
                {
                    var header = WithSourceHeader(message.Header.Span, origin.Name, message.Sequence);
                    try
                    {
                        target.Ingest.Process(message.Subject, default, header, message.Data.Span);
                    }
                    catch (StoreException)
                    {
                        // A full target with discard new refuses; the position still moves on, as Go's source does.
                    }
                }
                lock (_lock)
                {
                    _positions[(target, origin.Name)] = message.Sequence;
                }
            }
        }
    }

    private ulong NextSequence(JsStream origin, JsStream target, StreamSource source, bool isMirror)
    {
        if (isMirror)
        {
            var last = target.Store.State().LastSeq;
            return last > 0 ? last + 1 : Start(origin, source);
        }
        lock (_lock)
        {
            if (_positions.TryGetValue((target, origin.Name), out var position))
            {
                return position + 1;
            }
        }
        // After a restart: the newest message the target took from this origin names the position.
        var reuse = new StoredMessage();
        var seq = target.Store.State().LastSeq;
        for (var message = target.Store.LoadPrevMsg("", seq, reuse); message is not null && message.Sequence > 0;
             message = message.Sequence > 1 ? target.Store.LoadPrevMsg("", message.Sequence - 1, reuse) : null)
        {
            if (NatsHeaders.Get(message.Header.Span, SourceHeader) is { } value)
            {
                var parts = value.Split(' ');
                if (parts.Length >= 2 && parts[0] == origin.Name && ulong.TryParse(parts[1], out var sourced))
                {
                    return sourced + 1;
                }
            }
        }
        return Start(origin, source);
    }

    private static ulong Start(JsStream origin, StreamSource source)
    {
        if (source.OptStartSeq > 0)
        {
            return source.OptStartSeq;
        }
        if (source.OptStartTime is { IsZero: false } time)
        {
            return origin.Store.GetSeqFromTime(time.ToDateTime());
        }
        return 1;
    }

    private static byte[] WithSourceHeader(ReadOnlySpan<byte> header, string origin, ulong seq)
    {
        var line = $"{SourceHeader}: {origin} {seq}\r\n";
        if (header.IsEmpty)
        {
            return Encoding.UTF8.GetBytes($"NATS/1.0\r\n{line}\r\n");
        }
        // Insert before the blank line that ends the block.
        var text = Encoding.UTF8.GetString(header);
        var end = text.LastIndexOf("\r\n\r\n", StringComparison.Ordinal);
        return Encoding.UTF8.GetBytes(end < 0 ? text + line : text[..(end + 2)] + line + "\r\n");
    }
}
