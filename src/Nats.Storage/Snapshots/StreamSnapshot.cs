using System.Formats.Tar;
using System.IO.Compression;
using System.Text.Json;
using Nats.Storage.Consumers;
using Nats.Storage.File;
using Nats.Storage.Snapshots;

namespace Nats.Storage;

/// <summary>
/// Stream snapshots (JetStream's stream snapshot and restore). Our archive format, version 1: a gzip
/// compressed POSIX (pax) tar, so <c>tar tzf</c> can list it, holding
/// <list type="bullet">
/// <item><c>msgs/NNNNNNNNNN.blk</c>: the messages, in sequence order, as file-store records (the
/// <see cref="RecordCodec"/> layout: sequence, time, TTL expiry, subject, header, data, CRC-32C);</item>
/// <item><c>obs/NAME/config.bin</c> and <c>obs/NAME/state.bin</c> per consumer: ack policy, max deliver
/// and the server's opaque consumer metadata; the consumer state in the Go encoding's layout with exact
/// times (version 100);</item>
/// <item><c>stream.json</c> last: first and last sequence and counts.</item>
/// </list>
/// Go archives its store's own files with s2 compression; ours is engine-neutral (a memory stream can be
/// restored as a file stream and the other way round) and uses only the BCL. Restore verifies every
/// record's checksum and the counts.
/// </summary>
internal static class StreamSnapshot
{
    public const int Version = 1;

    /// <summary>Restores an archive written by <see cref="IStreamStore.Snapshot"/> into an empty store:
    /// same sequences, times, subjects, headers, data and TTLs, the same first and last sequence, and
    /// the consumers with their state.</summary>
    public static SnapshotResult Restore(Stream source, IStreamStore into)
    {
        var st = into.State();
        if (st.Msgs != 0 || st.LastSeq != 0)
        {
            throw new StoreException(StoreError.InvalidArgument, "restore needs an empty store");
        }

        using var gzip = new GZipStream(source, CompressionMode.Decompress, leaveOpen: true);
        using var tar = new TarReader(gzip, leaveOpen: true);
        SnapshotManifest? manifest = null;
        ulong restored = 0;
        var consumers = new Dictionary<string, (ConsumerStoreConfig? Config, ConsumerState? State)>(StringComparer.Ordinal);
        var buf = new MemoryStream();
        while (tar.GetNextEntry() is { } entry)
        {
            buf.SetLength(0);
            entry.DataStream?.CopyTo(buf);
            var bytes = buf.GetBuffer().AsSpan(0, (int)buf.Length);
            var name = entry.Name;
            if (name.StartsWith("msgs/", StringComparison.Ordinal))
            {
                restored += RestoreMessages(bytes, into);
            }
            else if (name.StartsWith("obs/", StringComparison.Ordinal))
            {
                var parts = name.Split('/');
                if (parts.Length != 3)
                {
                    throw Bad(name);
                }

                consumers.TryGetValue(parts[1], out var c);
                if (parts[2] == "config.bin")
                {
                    c.Config = ReadConsumerConfig(bytes);
                }
                else if (parts[2] == "state.bin")
                {
                    c.State = ConsumerStateCodec.Decode(bytes) ?? throw Bad(name);
                }
                else
                {
                    throw Bad(name);
                }

                consumers[parts[1]] = c;
            }
            else if (name == "stream.json")
            {
                manifest = JsonSerializer.Deserialize(bytes, SnapshotJson.Default.SnapshotManifest) ?? throw Bad(name);
            }
            else
            {
                throw Bad(name);
            }
        }
        if (manifest is null || manifest.Version != Version)
        {
            throw new StoreException(StoreError.InvalidArgument, "snapshot has no stream manifest of a known version");
        }

        if (restored != manifest.Msgs || consumers.Count != manifest.Consumers)
        {
            throw new StoreException(StoreError.InvalidArgument, "snapshot is incomplete");
        }
        // Deleted sequences at either end: the range continues exactly where the original's did.
        var now = into.State();
        if (now.Msgs == 0 && manifest.FirstSeq > 1)
        {
            into.Compact(manifest.FirstSeq);
        }

        now = into.State();
        if (manifest.LastSeq > now.LastSeq)
        {
            into.SkipMsgs(now.LastSeq + 1, manifest.LastSeq - now.LastSeq);
        }

        foreach (var (name, (config, state)) in consumers)
        {
            if (config is null || state is null)
            {
                throw Bad($"obs/{name}");
            }

            into.ConsumerStore(name, config).Update(state).Wait();
        }
        into.WhenDurable().Wait();
        return new SnapshotResult(into.State(), consumers.Count);
    }

    internal static void WriteConsumer(TarWriter tar, string name, ConsumerStoreConfig config, ConsumerState state)
    {
        var cfg = new List<byte> { (byte)config.AckPolicy };
        Varint.PutSigned(cfg, config.MaxDeliver);
        Varint.Put(cfg, (ulong)config.Metadata.Length);
        cfg.AddRange(config.Metadata);
        WriteEntry(tar, $"obs/{name}/config.bin", [.. cfg]);
        WriteEntry(tar, $"obs/{name}/state.bin", ConsumerStateCodec.Encode(state, exact: true, 0));
    }

    internal static void WriteManifest(TarWriter tar, SnapshotManifest manifest)
        => WriteEntry(tar, "stream.json", JsonSerializer.SerializeToUtf8Bytes(manifest, SnapshotJson.Default.SnapshotManifest));

    private static void WriteEntry(TarWriter tar, string name, byte[] data)
        => tar.WriteEntry(new PaxTarEntry(TarEntryType.RegularFile, name) { DataStream = new MemoryStream(data) });

    private static ulong RestoreMessages(ReadOnlySpan<byte> chunk, IStreamStore into)
    {
        ulong n = 0;
        var pos = 0;
        while (pos < chunk.Length)
        {
            if (!RecordCodec.TryRead(chunk[pos..], out var rec) || rec.Kind != RecordKind.Message)
            {
                throw new StoreException(StoreError.InvalidArgument, "snapshot message record is damaged");
            }

            var r = chunk.Slice(pos, rec.Length);
            var subject = System.Text.Encoding.UTF8.GetString(r.Slice(rec.SubjectOffset, rec.SubjectLength));
            var ttl = rec.TtlExpiry switch
            {
                < 0 => -1,
                0 => 0,
                // Stored as an absolute expiry; the store takes seconds after the message's time.
                var e => Math.Max(1, (e - rec.Timestamp + 999_999_999) / 1_000_000_000),
            };
            into.StoreRawMsg(subject, r.Slice(rec.HeaderOffset, rec.HeaderLength), r.Slice(rec.DataOffset, rec.DataLength),
                rec.Seq, rec.Timestamp, ttl);
            pos += rec.Length;
            n++;
        }
        return n;
    }

    private static ConsumerStoreConfig ReadConsumerConfig(ReadOnlySpan<byte> buf)
    {
        if (buf.Length < 1)
        {
            throw Bad("consumer config");
        }

        var pos = 1;
        var maxDeliver = Varint.ReadSigned(buf, ref pos);
        var len = (int)Varint.Read(buf, ref pos);
        if (pos < 0 || len < 0 || pos + len > buf.Length)
        {
            throw Bad("consumer config");
        }

        return new ConsumerStoreConfig { AckPolicy = (AckPolicy)buf[0], MaxDeliver = maxDeliver, Metadata = buf.Slice(pos, len).ToArray() };
    }

    private static StoreException Bad(string what) => new(StoreError.InvalidArgument, $"snapshot entry {what} is not valid");
}
