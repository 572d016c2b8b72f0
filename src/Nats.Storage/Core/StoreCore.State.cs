namespace Nats.Storage.Core;

/// <summary>
/// The shared part of a stream state file: counters, per-subject totals and the sequence index as
/// summaries. Memory and size are per subject and per index chunk, never per message.
/// </summary>
internal abstract partial class StoreCore
{
    /// <summary>Per-message expiry (TTLs, never-expire marks) lives only in the blocks, so a store holding
    /// any is rebuilt by a full replay instead.</summary>
    protected bool CanSaveState => _ttl is not { Count: > 0 } && _neverExpire is not { Count: > 0 };

    protected void SaveCoreState(BinaryWriter w)
    {
        w.Write(FirstSeq);
        w.Write(LastSeq);
        w.Write(LastTs);
        w.Write(MsgCount);
        w.Write(ByteCount);
        w.Write(Subjects.Count);
        foreach (var info in Subjects.All)
        {
            w.Write(info.Subject);
            w.Write(info.Count);
            w.Write(info.First);
            w.Write(info.Last);
            w.Write((byte)((info.FirstStale ? 1 : 0) | (info.LastStale ? 2 : 0)));
        }
        Slots.Save(w);
    }

    /// <summary>Restores <see cref="SaveCoreState"/>'s content into an empty store.</summary>
    protected void LoadCoreState(BinaryReader r)
    {
        FirstSeq = r.ReadUInt64();
        LastSeq = r.ReadUInt64();
        LastTs = r.ReadInt64();
        MsgCount = r.ReadUInt64();
        ByteCount = r.ReadUInt64();
        var subjects = r.ReadInt32();
        for (var i = 0; i < subjects; i++)
        {
            var subject = r.ReadString();
            var (count, first, last, flags) = (r.ReadUInt64(), r.ReadUInt64(), r.ReadUInt64(), r.ReadByte());
            if (count == 0)
            {
                continue; // written by a build that could keep an empty subject after a failed write
            }

            var info = Subjects.GetOrAdd(subject);
            (info.Count, info.First, info.Last) = (count, first, last);
            info.FirstStale = (flags & 1) != 0;
            info.LastStale = (flags & 2) != 0;
        }
        Slots.Load(r);
    }
}
