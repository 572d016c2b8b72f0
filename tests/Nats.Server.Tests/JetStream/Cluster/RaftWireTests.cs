using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

public class RaftWireTests
{
    [Fact]
    public void VoteRequestIsGosThirtyTwoBytes()
    {
        var bytes = RaftWire.Encode(new VoteRequest(7, 6, 42, "ABCDEFGH"));
        Assert.Equal(32, bytes.Length);
        Assert.Equal(new byte[] { 7, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0 }, bytes[..24]);
        Assert.Equal("ABCDEFGH"u8.ToArray(), bytes[24..]);
        Assert.True(RaftWire.TryDecode(bytes, out VoteRequest back));
        Assert.Equal(new VoteRequest(7, 6, 42, "ABCDEFGH"), back);
    }

    [Fact]
    public void ResponsesAreGosSizes()
    {
        var vote = RaftWire.Encode(new VoteResponse(3, "peer0001", true));
        Assert.Equal(17, vote.Length);
        Assert.Equal(1, vote[16]);
        Assert.True(RaftWire.TryDecode(vote, out VoteResponse v) && v.Granted && v.Peer == "peer0001");
        var ack = RaftWire.Encode(new AppendEntryResponse(3, 99, "peer0001", false));
        Assert.Equal(25, ack.Length);
        Assert.True(RaftWire.TryDecode(ack, out AppendEntryResponse a) && !a.Success && a.Index == 99);
    }

    [Fact]
    public void AppendEntryIsGosLayoutWithoutATrailerInTheLeadersTerm()
    {
        var ae = new AppendEntry("LEADER01", 5, 10, 4, 11, [(RaftEntryType.Normal, "hi"u8.ToArray())], 5);
        var bytes = RaftWire.Encode(ae);
        // leader[8], term, commit, pterm, pindex, u16 count, u32 len+1, type, data
        Assert.Equal(42 + 4 + 1 + 2, bytes.Length);
        Assert.Equal(1, bytes[40]);
        Assert.Equal(3, bytes[42]);
        Assert.Equal((byte)'h', bytes[47]);
        Assert.True(RaftWire.TryDecode(bytes, out AppendEntry? back));
        Assert.Equal(5UL, back!.EntryTerm);
        Assert.Equal("hi"u8.ToArray(), back.Entries[0].Data);

        var catchup = RaftWire.Encode(ae with { EntryTerm = 2 });
        Assert.Equal(bytes.Length + 8, catchup.Length);
        Assert.True(RaftWire.TryDecode(catchup, out back));
        Assert.Equal(2UL, back!.EntryTerm);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(10)]
    [InlineData(41)]
    public void MalformedAppendsAreRefused(int cut)
    {
        var bytes = RaftWire.Encode(new AppendEntry("LEADER01", 5, 10, 4, 11, [(RaftEntryType.Normal, "hello"u8.ToArray())], 5));
        Assert.False(RaftWire.TryDecode(bytes.AsSpan(0, cut), out AppendEntry? _));
        Assert.False(RaftWire.TryDecode(bytes.AsSpan(0, bytes.Length - 1), out AppendEntry? _));
        bytes[42] = 200; // an entry longer than the message
        Assert.False(RaftWire.TryDecode(bytes, out AppendEntry? _));
    }

    [Fact]
    public void NodeCountsGarbageAsRefused()
    {
        var sim = new RaftSimulation(3, seed: 9);
        var node = sim.Nodes[0].Node!;
        node.Receive(RaftMessageKind.AppendEntry, new byte[5], 0);
        node.Receive(RaftMessageKind.VoteRequest, new byte[31], 0);
        // A well-formed vote request from a stranger beyond the group's size is refused too.
        node.Receive(RaftMessageKind.VoteRequest, RaftWire.Encode(new VoteRequest(99, 99, 99, "STRANGER")), 0);
        Assert.Equal(3, node.Refused);
        Assert.Equal(0UL, node.Term);
    }

    [Fact]
    public void PeerStateRoundTrips()
    {
        var bytes = RaftWire.EncodePeerState(3, ["AAAAAAAA", "BBBBBBBB"]);
        Assert.Equal(8 + 16 + 2, bytes.Length);
        Assert.True(RaftWire.TryDecodePeerState(bytes, out var size, out var peers));
        Assert.Equal(3, size);
        Assert.Equal(["AAAAAAAA", "BBBBBBBB"], peers);
    }
}
