using System.Formats.Tar;
using System.IO.Compression;
using Nats.Storage.Snapshots;

namespace Nats.Storage.Core;

internal abstract partial class StoreCore
{
    // Messages copied per lock hold: publishes wait at most this many record copies.
    private const int SnapshotBatch = 1024;

    public SnapshotResult Snapshot(Stream destination, bool includeConsumers)
    {
        StreamState state;
        Dictionary<ulong, long> ttls;
        lock (Sync)
        {
            ThrowIfClosed();
            state = State();
            // Per-message expiries by sequence, so the copy keeps each message's TTL.
            ttls = _ttl is null ? [] : _ttl.UnorderedItems.ToDictionary(e => e.Element, e => e.Priority);
            if (_neverExpire is not null)
            {
                foreach (var s in _neverExpire)
                {
                    ttls[s] = -1;
                }
            }
        }
        using var gzip = new GZipStream(destination, CompressionLevel.Fastest, leaveOpen: true);
        using var tar = new TarWriter(gzip, TarEntryFormat.Pax, leaveOpen: true);
        var chunk = new SnapshotChunkWriter(tar);
        var sm = new StoredMessage();
        ulong msgs = 0, bytes = 0;
        var next = state.FirstSeq;
        while (next <= state.LastSeq)
        {
            lock (Sync)
            {
                ThrowIfClosed();
                for (var n = 0; n < SnapshotBatch && next <= state.LastSeq; n++)
                {
                    var seq = FindNext(">", next);
                    if (seq == 0 || seq > state.LastSeq)
                    {
                        next = state.LastSeq + 1;
                        break;
                    }
                    next = seq + 1;
                    if (Materialize(seq, sm) is null)
                    {
                        continue;
                    }

                    chunk.Add(sm, ttls.GetValueOrDefault(seq));
                    msgs++;
                    bytes += (ulong)Slots[seq].Size;
                }
            }
            FireEvents();
        }
        chunk.Flush();
        var consumers = 0;
        if (includeConsumers)
        {
            foreach (var name in ConsumerNames())
            {
                var c = ConsumerStore(name);
                StreamSnapshot.WriteConsumer(tar, name, c.Config, c.State());
                consumers++;
            }
        }
        StreamSnapshot.WriteManifest(tar, new SnapshotManifest
        {
            Version = StreamSnapshot.Version,
            Name = Config.Name,
            FirstSeq = state.FirstSeq,
            LastSeq = state.LastSeq,
            LastTime = state.LastTime,
            Msgs = msgs,
            Consumers = consumers,
        });
        return new SnapshotResult(state with { Msgs = msgs, Bytes = bytes }, consumers);
    }
}
