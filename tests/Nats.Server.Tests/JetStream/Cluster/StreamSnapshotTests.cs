using System.Text;
using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

public class StreamSnapshotTests
{
    [Fact]
    public void EncodesGosStreamSnapshotJson()
    {
        var json = Encoding.UTF8.GetString(new StreamSnapshot(3, 300, 5, 9, [6, 8]).Encode());
        Assert.Equal("""{"messages":3,"bytes":300,"first_seq":5,"last_seq":9,"clfs":0,"deleted":[6,8]}""", json);
        Assert.Equal("""{"messages":0,"bytes":0,"first_seq":10,"last_seq":9,"clfs":0}""",
            Encoding.UTF8.GetString(new StreamSnapshot(0, 0, 10, 9, []).Encode()));
    }

    [Fact]
    public void DecodesGosFieldsInAnyOrderAndSkipsUnknownOnes()
    {
        var snapshot = StreamSnapshot.TryDecode("""{"last_seq":9,"deleted":[6,8],"clfs":2,"future":{"a":[1]},"first_seq":5,"bytes":300,"messages":3}"""u8);
        Assert.NotNull(snapshot);
        Assert.Equal((3UL, 300UL, 5UL, 9UL), (snapshot.Msgs, snapshot.Bytes, snapshot.FirstSeq, snapshot.LastSeq));
        Assert.Equal([6UL, 8UL], snapshot.Deleted);
    }

    [Theory]
    [InlineData("")]
    [InlineData("[]")]
    [InlineData("{\"last_seq\":-1}")]
    [InlineData("{\"last_seq\":")]
    public void AnythingElseIsNoSnapshot(string data) => Assert.Null(StreamSnapshot.TryDecode(Encoding.UTF8.GetBytes(data)));
}
