namespace Nats.Storage.Consumers;

/// <summary>
/// Consumer state on disk (<see cref="ConsumerLog"/>): each applied operation is appended and fsynced
/// (group commit) before the call returns; when the log outgrows the state it describes, the state is
/// written as a new snapshot and the log starts over. Opening replays snapshot and log through the same
/// state machine the live store used.
/// </summary>
internal sealed class FileConsumerStore : ConsumerStoreBase
{
    private readonly string _dir;
    private readonly IO.IStoreFileSystem _fs;
    private readonly ConsumerLog _log;
    private readonly List<byte> _scratch = new(64);
    private readonly long _minCompact;
    private long _compactAt;

    /// <summary>Opens <paramref name="dir"/>; a null <paramref name="config"/> takes the persisted one.</summary>
    public FileConsumerStore(string name, string dir, ConsumerStoreConfig? config, IO.IStoreFileSystem fs, int compactBytes)
        : base(name, config ?? new ConsumerStoreConfig())
    {
        _dir = dir;
        _fs = fs;
        _minCompact = compactBytes;
        _log = ConsumerLog.Open(fs, dir, Sync, out var snapshot, out var records);
        var persistedConfig = false;
        if (snapshot is not null)
        {
            persistedConfig = ApplySnapshot(snapshot);
        }

        foreach (var rec in records)
        {
            persistedConfig |= Replay(rec);
        }

        if (config is not null && (!persistedConfig || !SameConfig(Tracker.Config, config)))
        {
            Tracker.Config = config;
            lock (Sync)
            {
                PersistConfig(config);
            }
        }
        else if (!persistedConfig)
        {
            lock (Sync)
            {
                PersistConfig(Tracker.Config);
            }
        }
        DurabilityTicket created;
        lock (Sync)
        {
            created = _log.Current();
        }

        created.Wait(); // opening is rare: a consumer's creation is durable before it is used
        _compactAt = Math.Max(_minCompact, _log.Length * 2);
    }

    public override StorageType Type => StorageType.File;

    protected override DurabilityTicket Persist(ConsumerOp op, ulong a, ulong b, ulong c, long ts)
    {
        _scratch.Clear();
        _scratch.Add((byte)op);
        Varint.Put(_scratch, a);
        Varint.Put(_scratch, b);
        Varint.Put(_scratch, c);
        Varint.PutSigned(_scratch, ts);
        return AppendScratch();
    }

    protected override DurabilityTicket PersistConfig(ConsumerStoreConfig config)
    {
        _scratch.Clear();
        _scratch.Add((byte)ConsumerOp.Config);
        WriteConfig(_scratch, config);
        return AppendScratch();
    }

    protected override DurabilityTicket PersistState()
    {
        _scratch.Clear();
        _scratch.Add((byte)ConsumerOp.State);
        _scratch.AddRange(ConsumerStateCodec.Encode(Tracker.State, exact: true, 0));
        return AppendScratch();
    }

    protected override DurabilityTicket Current() => _log.Current();

    protected override void OnStop() => _log.Dispose();

    protected override void OnDelete()
    {
        _fs.DeleteDirectory(_dir);
        // The removal of the consumer's directory entry must be durable, or a power cut brings it back.
        _fs.SyncDirectory(Path.GetDirectoryName(_dir)!);
    }

    private DurabilityTicket AppendScratch()
    {
        var ticket = _log.Append(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(_scratch));
        if (_log.Length >= _compactAt)
        {
            // The log has outgrown the state: write the state once (synced) and start an empty log.
            var snap = new List<byte>();
            WriteConfig(snap, Tracker.Config);
            snap.AddRange(ConsumerStateCodec.Encode(Tracker.State, exact: true, 0));
            _log.WriteSnapshot(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(snap));
            _compactAt = Math.Max(_minCompact, snap.Count * 4L);
        }
        return ticket;
    }

    private bool ApplySnapshot(byte[] payload)
    {
        var pos = 0;
        Tracker.Config = ReadConfig(payload, ref pos);
        Tracker.Load(ConsumerStateCodec.Decode(payload.AsSpan(pos))
            ?? throw new StoreException(StoreError.InvalidArgument, $"consumer state in {_dir} does not decode"));
        return true;
    }

    /// <summary>Applies one logged operation; true when it was a configuration record.</summary>
    private bool Replay(byte[] rec)
    {
        var op = (ConsumerOp)rec[0];
        var pos = 1;
        switch (op)
        {
            case ConsumerOp.Config:
                Tracker.Config = ReadConfig(rec, ref pos);
                return true;
            case ConsumerOp.State:
                Tracker.Load(ConsumerStateCodec.Decode(rec.AsSpan(1)) ?? Tracker.State);
                return false;
        }
        var a = Varint.Read(rec, ref pos);
        var b = Varint.Read(rec, ref pos);
        var c = Varint.Read(rec, ref pos);
        var ts = Varint.ReadSigned(rec, ref pos);
        try
        {
            switch (op)
            {
                case ConsumerOp.Delivered:
                    Tracker.Delivered(a, b, c, ts);
                    break;
                case ConsumerOp.Ack:
                    Tracker.Ack(a, b);
                    break;
                case ConsumerOp.SetStarting:
                    Tracker.SetStarting(a);
                    break;
                case ConsumerOp.UpdateStarting:
                    Tracker.UpdateStarting(a);
                    break;
            }
        }
        catch (StoreException)
        {
            // The live call failed the same way after changing what it changed; replay matches it.
        }
        return false;
    }

    private static void WriteConfig(List<byte> buf, ConsumerStoreConfig config)
    {
        buf.Add((byte)config.AckPolicy);
        Varint.PutSigned(buf, config.MaxDeliver);
        Varint.Put(buf, (ulong)config.Metadata.Length);
        buf.AddRange(config.Metadata);
    }

    private static ConsumerStoreConfig ReadConfig(ReadOnlySpan<byte> buf, ref int pos)
    {
        var ack = (AckPolicy)buf[pos++];
        var maxDeliver = Varint.ReadSigned(buf, ref pos);
        var len = (int)Varint.Read(buf, ref pos);
        var meta = buf.Slice(pos, len).ToArray();
        pos += len;
        return new ConsumerStoreConfig { AckPolicy = ack, MaxDeliver = maxDeliver, Metadata = meta };
    }

    private static bool SameConfig(ConsumerStoreConfig a, ConsumerStoreConfig b)
        => a.AckPolicy == b.AckPolicy && a.MaxDeliver == b.MaxDeliver && a.Metadata.AsSpan().SequenceEqual(b.Metadata);
}
