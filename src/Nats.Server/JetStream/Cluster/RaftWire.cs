using System.Buffers.Binary;
using System.Text;

namespace Nats.Server.JetStream.Cluster;

/// <summary>Go's vote request, 32 bytes: term, lastTerm, lastIndex (u64 LE), candidate[8].</summary>
internal readonly record struct VoteRequest(ulong Term, ulong LastTerm, ulong LastIndex, string Candidate);

/// <summary>Go's vote response, 17 bytes: term, peer[8], granted.</summary>
internal readonly record struct VoteResponse(ulong Term, string Peer, bool Granted);

/// <summary>Go's append-entry response, 25 bytes: term, index, peer[8], success.</summary>
internal readonly record struct AppendEntryResponse(ulong Term, ulong Index, string Peer, bool Success);

/// <summary>
/// Go's append entry: leader[8], term, commit, pterm, pindex, u16 count, then per entry u32 (len+1), type, data.
/// <see cref="EntryTerm"/> is ours: Go writes every entry of an append under the append's term and re-sends
/// stored appends to catch a peer up; we keep entries, not appends, so a catch-up append of older entries
/// carries their term as a trailing u64 after the entries (absent, and the bytes are Go's, when it equals
/// the leader's term). Go's decoder stops after the entries and ignores the trailer.
/// </summary>
internal sealed record AppendEntry(string Leader, ulong Term, ulong Commit, ulong PrevTerm, ulong PrevIndex,
    IReadOnlyList<(RaftEntryType Type, byte[] Data)> Entries, ulong EntryTerm);

/// <summary>Encoding and decoding of the $NRG payloads; decoding refuses anything malformed.</summary>
internal static class RaftWire
{
    public const int PeerIdLength = 8;
    public const int VoteRequestLength = 32;
    public const int VoteResponseLength = 17;
    public const int AppendEntryResponseLength = 25;
    public const int AppendEntryHeaderLength = 42;

    public static byte[] Encode(in VoteRequest v)
    {
        var b = new byte[VoteRequestLength];
        BinaryPrimitives.WriteUInt64LittleEndian(b, v.Term);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(8), v.LastTerm);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(16), v.LastIndex);
        WritePeer(b.AsSpan(24), v.Candidate);
        return b;
    }

    public static bool TryDecode(ReadOnlySpan<byte> b, out VoteRequest v)
    {
        v = default;
        if (b.Length != VoteRequestLength || !TryReadPeer(b[24..], out var candidate))
        {
            return false;
        }
        v = new VoteRequest(BinaryPrimitives.ReadUInt64LittleEndian(b), BinaryPrimitives.ReadUInt64LittleEndian(b[8..]),
            BinaryPrimitives.ReadUInt64LittleEndian(b[16..]), candidate);
        return true;
    }

    public static byte[] Encode(in VoteResponse v)
    {
        var b = new byte[VoteResponseLength];
        BinaryPrimitives.WriteUInt64LittleEndian(b, v.Term);
        WritePeer(b.AsSpan(8), v.Peer);
        b[16] = v.Granted ? (byte)1 : (byte)0;
        return b;
    }

    public static bool TryDecode(ReadOnlySpan<byte> b, out VoteResponse v)
    {
        v = default;
        if (b.Length != VoteResponseLength || !TryReadPeer(b[8..], out var peer))
        {
            return false;
        }
        v = new VoteResponse(BinaryPrimitives.ReadUInt64LittleEndian(b), peer, b[16] == 1);
        return true;
    }

    public static byte[] Encode(in AppendEntryResponse r)
    {
        var b = new byte[AppendEntryResponseLength];
        BinaryPrimitives.WriteUInt64LittleEndian(b, r.Term);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(8), r.Index);
        WritePeer(b.AsSpan(16), r.Peer);
        b[24] = r.Success ? (byte)1 : (byte)0;
        return b;
    }

    public static bool TryDecode(ReadOnlySpan<byte> b, out AppendEntryResponse r)
    {
        r = default;
        if (b.Length != AppendEntryResponseLength || !TryReadPeer(b[16..], out var peer))
        {
            return false;
        }
        r = new AppendEntryResponse(BinaryPrimitives.ReadUInt64LittleEndian(b), BinaryPrimitives.ReadUInt64LittleEndian(b[8..]), peer, b[24] == 1);
        return true;
    }

    public static byte[] Encode(AppendEntry ae)
    {
        var size = AppendEntryHeaderLength;
        foreach (var (_, data) in ae.Entries)
        {
            size += 5 + data.Length;
        }
        var trailer = ae.EntryTerm != ae.Term && ae.Entries.Count > 0;
        if (trailer)
        {
            size += 8;
        }
        var b = new byte[size];
        WritePeer(b, ae.Leader);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(8), ae.Term);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(16), ae.Commit);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(24), ae.PrevTerm);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(32), ae.PrevIndex);
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(40), checked((ushort)ae.Entries.Count));
        var at = AppendEntryHeaderLength;
        foreach (var (type, data) in ae.Entries)
        {
            BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(at), (uint)data.Length + 1);
            b[at + 4] = (byte)type;
            data.CopyTo(b.AsSpan(at + 5));
            at += 5 + data.Length;
        }
        if (trailer)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(at), ae.EntryTerm);
        }
        return b;
    }

    public static bool TryDecode(ReadOnlySpan<byte> b, out AppendEntry? ae)
    {
        ae = null;
        if (b.Length < AppendEntryHeaderLength || !TryReadPeer(b, out var leader))
        {
            return false;
        }
        var term = BinaryPrimitives.ReadUInt64LittleEndian(b[8..]);
        var count = BinaryPrimitives.ReadUInt16LittleEndian(b[40..]);
        var entries = new List<(RaftEntryType, byte[])>(count);
        var at = AppendEntryHeaderLength;
        for (var i = 0; i < count; i++)
        {
            if (b.Length - at < 5)
            {
                return false;
            }
            var length = BinaryPrimitives.ReadUInt32LittleEndian(b[at..]);
            if (length == 0 || length - 1 > (uint)(b.Length - at - 5) || b[at + 4] > (byte)RaftEntryType.Snapshot)
            {
                return false;
            }
            entries.Add(((RaftEntryType)b[at + 4], b.Slice(at + 5, (int)length - 1).ToArray()));
            at += 4 + (int)length;
        }
        var entryTerm = term;
        if (b.Length - at == 8 && count > 0)
        {
            entryTerm = BinaryPrimitives.ReadUInt64LittleEndian(b[at..]);
        }
        else if (b.Length != at)
        {
            return false;
        }
        ae = new AppendEntry(leader, term, BinaryPrimitives.ReadUInt64LittleEndian(b[16..]), BinaryPrimitives.ReadUInt64LittleEndian(b[24..]),
            BinaryPrimitives.ReadUInt64LittleEndian(b[32..]), entries, entryTerm);
        return true;
    }

    /// <summary>Go's PeerState entry: u32 cluster size, u32 count, peers[8]..., u16 extension state.</summary>
    public static byte[] EncodePeerState(int clusterSize, IReadOnlyCollection<string> peers)
    {
        var b = new byte[8 + (peers.Count * PeerIdLength) + 2];
        BinaryPrimitives.WriteUInt32LittleEndian(b, (uint)clusterSize);
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(4), (uint)peers.Count);
        var at = 8;
        foreach (var peer in peers)
        {
            WritePeer(b.AsSpan(at), peer);
            at += PeerIdLength;
        }
        return b;
    }

    public static bool TryDecodePeerState(ReadOnlySpan<byte> b, out int clusterSize, out List<string> peers)
    {
        clusterSize = 0;
        peers = [];
        if (b.Length < 10)
        {
            return false;
        }
        clusterSize = (int)Math.Min(BinaryPrimitives.ReadUInt32LittleEndian(b), int.MaxValue);
        var count = BinaryPrimitives.ReadUInt32LittleEndian(b[4..]);
        if ((ulong)b.Length != 10 + ((ulong)count * PeerIdLength))
        {
            return false;
        }
        for (var i = 0; i < count; i++)
        {
            if (!TryReadPeer(b[(8 + (i * PeerIdLength))..], out var peer))
            {
                return false;
            }
            peers.Add(peer);
        }
        return true;
    }

    private static void WritePeer(Span<byte> into, string peer)
    {
        if (peer.Length != PeerIdLength || Encoding.ASCII.GetBytes(peer, into) != PeerIdLength)
        {
            throw new ArgumentException($"a peer id is {PeerIdLength} ASCII characters: '{peer}'", nameof(peer));
        }
    }

    private static bool TryReadPeer(ReadOnlySpan<byte> from, out string peer)
    {
        peer = "";
        from = from[..PeerIdLength];
        foreach (var c in from)
        {
            if (c is <= (byte)' ' or >= 127 or (byte)'.' or (byte)'*' or (byte)'>')
            {
                return false;
            }
        }
        peer = Encoding.ASCII.GetString(from);
        return true;
    }
}
