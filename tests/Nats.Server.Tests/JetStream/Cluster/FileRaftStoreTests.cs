using Nats.Server.JetStream.Cluster;

namespace Nats.Server.Tests.JetStream.Cluster;

public sealed class FileRaftStoreTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "raftstore-" + Guid.NewGuid().ToString("N"));

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static RaftEntry Entry(ulong term, string data) => new(term, RaftEntryType.Normal, System.Text.Encoding.ASCII.GetBytes(data));

    [Fact]
    public void StateLogAndSnapshotSurviveReopen()
    {
        using (var store = new FileRaftStore(_dir))
        {
            store.SaveState(4, "ABCDEFGH");
            for (var i = 1; i <= 10; i++)
            {
                store.Append(Entry((ulong)(i < 5 ? 1 : 2), "e" + i));
            }
            store.Sync();
            store.SaveSnapshot(new RaftSnapshot(6, 2, "snap"u8.ToArray()), keepLog: true);
            store.TruncateAfter(8);
            store.Append(Entry(3, "new9"));
            store.Sync();
        }
        using (var store = new FileRaftStore(_dir))
        {
            Assert.Equal(new RaftHardState(4, "ABCDEFGH"), store.State);
            Assert.Equal(6UL, store.Snapshot!.Index);
            Assert.Equal("snap"u8.ToArray(), store.Snapshot.Data);
            Assert.Equal(7UL, store.FirstIndex);
            Assert.Equal(9UL, store.LastIndex);
            Assert.Equal(2UL, store.TermAt(6));
            Assert.Equal("e8"u8.ToArray(), store.EntryAt(8).Data);
            Assert.Equal(3UL, store.TermAt(9));
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ADamagedOrTornTailIsCutOffNotServed(bool flip)
    {
        using (var store = new FileRaftStore(_dir))
        {
            for (var i = 1; i <= 5; i++)
            {
                store.Append(Entry(1, "entry" + i));
            }
            store.Sync();
        }
        var wal = Path.Combine(_dir, "wal.log");
        var bytes = File.ReadAllBytes(wal);
        var recordLength = bytes.Length / 5;
        if (flip)
        {
            bytes[(3 * recordLength) + 20] ^= 0x10; // inside the fourth record
        }
        else
        {
            bytes = bytes[..((3 * recordLength) + 7)]; // the fourth record torn
        }
        File.WriteAllBytes(wal, bytes);
        var warnings = new List<string>();
        using (var store = new FileRaftStore(_dir, warnings.Add))
        {
            Assert.Equal(3UL, store.LastIndex);
            Assert.Single(warnings);
            store.Append(Entry(2, "after"));
            store.Sync();
        }
        using (var store = new FileRaftStore(_dir))
        {
            Assert.Equal(4UL, store.LastIndex);
            Assert.Equal("after"u8.ToArray(), store.EntryAt(4).Data);
        }
    }

    [Fact]
    public void ADamagedVoteRefusesToStart()
    {
        using (var store = new FileRaftStore(_dir))
        {
            store.SaveState(9, "ABCDEFGH");
        }
        var path = Path.Combine(_dir, "tav.idx");
        var bytes = File.ReadAllBytes(path);
        bytes[0] ^= 1;
        File.WriteAllBytes(path, bytes);
        Assert.Throws<InvalidDataException>(() => new FileRaftStore(_dir));
    }
}
