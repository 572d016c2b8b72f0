using System.Text;
using Nats.Storage.File;
using Nats.Storage.IO;
using Nats.Storage.Tests.Durability;
using Nats.Storage.Tests.IO;

namespace Nats.Storage.Tests;

/// <summary>The active block keeps only unwritten bytes in memory (Go's write buffer), reads of written
/// bytes go to the file (read windows when scanned), its index is written from the file when it seals,
/// and block buffers are pooled within a bound.</summary>
public sealed class WriteBufferTests
{
    private static byte[] Payload(int i) => Encoding.UTF8.GetBytes($"payload {i} " + new string((char)('a' + (i % 26)), i % 300));

    [Fact]
    public void WrittenBytesLeaveMemory()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 64 * 1024));
        for (var i = 0; i < 4000; i++)
        {
            store.StoreMsg($"s.{i % 7}", default, Payload(i));
        }
        // ~0.8 MB written over a dozen blocks; only the active block's small write buffer is held.
        Assert.True(store.BlockPaths.Count > 8, $"{store.BlockPaths.Count} blocks");
        Assert.Equal(1, store.CachedBlocks);
        Assert.True(store.BufferBytes <= 256 * 1024, $"{store.BufferBytes} bytes of buffers held");

        // Reading the active block's written bytes over and over (a scan): read windows over its file,
        // no block loaded whole; appends and reads stay exact.
        var sm = new StoredMessage();
        var last = store.State().LastSeq;
        for (var n = 0; n < 3; n++)
        {
            for (var s = last - 100; s <= last; s++)
            {
                Assert.Equal(Payload((int)s - 1), store.LoadMsg(s, sm)!.Data.ToArray());
            }
        }
        Assert.True(store.ReadWindowsHeld);
        Assert.Equal(1, store.CachedBlocks);
        for (var i = 4000; i < 4300; i++)
        {
            store.StoreMsg($"s.{i % 7}", default, Payload(i));
            Assert.Equal(Payload(i), store.LoadMsg((ulong)i + 1, sm)!.Data.ToArray());
            Assert.Equal(Payload(i / 2), store.LoadMsg((ulong)(i / 2) + 1, sm)!.Data.ToArray());
        }
        Assert.True(store.BufferBytes <= 256 * 1024, $"{store.BufferBytes} bytes of buffers held while read");

        // Written but no longer read for a period: back to the write buffer alone; nothing lost.
        store.ExpireCaches();
        for (var i = 4300; i < 4400; i++)
        {
            store.StoreMsg($"s.{i % 7}", default, Payload(i));
        }
        store.ExpireCaches();
        Assert.True(store.BufferBytes <= 256 * 1024, $"{store.BufferBytes} bytes of buffers held after expiry");
        Assert.False(store.ReadWindowsHeld);
        for (var i = 4400; i < 4500; i++)
        {
            store.StoreMsg($"s.{i % 7}", default, Payload(i));
        }
        for (var i = 0; i < 4500; i++)
        {
            Assert.Equal(Payload(i), store.LoadMsg((ulong)i + 1, sm)!.Data.ToArray());
        }
        store.Stop();
        var reopened = CrashStores.Open(CrashStores.Options(fs, blockSize: 64 * 1024));
        Assert.Equal(4500UL, reopened.State().Msgs);
        for (var i = 0; i < 4500; i++)
        {
            Assert.Equal(Payload(i), reopened.LoadMsg((ulong)i + 1, sm)!.Data.ToArray());
        }
        reopened.Stop();
    }

    [Fact]
    public void BufferedAppendsAreReadBeforeAndAfterTheyAreWritten()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 32 * 1024, mode: FileWriteMode.Buffered));
        var sm = new StoredMessage();
        for (var i = 0; i < 2000; i++)
        {
            store.StoreMsg($"b.{i % 3}", default, Payload(i));
            // Unwritten bytes are read from the buffer, written ones from the file.
            Assert.Equal(Payload(i / 2), store.LoadMsg((ulong)(i / 2) + 1, sm)!.Data.ToArray());
            if (i % 50 == 0)
            {
                store.FlushAllPending();
            }
            if (i % 333 == 0)
            {
                store.ExpireCaches();
            }
        }
        store.Stop();
        var reopened = CrashStores.Open(CrashStores.Options(fs, blockSize: 32 * 1024));
        for (var i = 0; i < 2000; i++)
        {
            Assert.Equal(Payload(i), reopened.LoadMsg((ulong)i + 1, sm)!.Data.ToArray());
        }
        reopened.Stop();
    }

    [Fact]
    public void AnIndexWrittenFromTheFileEqualsOneWrittenFromMemory()
    {
        var fs = new CrashFileSystem();
        var store = CrashStores.Open(CrashStores.Options(fs, blockSize: 4 << 20));
        var rnd = new Random(7);
        for (var i = 0; i < 600; i++)
        {
            // Records across the 256 KB read window, and two larger than it.
            var data = new byte[i is 100 or 400 ? 300_000 : rnd.Next(0, 3000)];
            rnd.NextBytes(data);
            store.StoreMsg(i % 5 == 0 ? $"long.subject.{new string('x', i % 200)}" : $"s.{i}", default, data);
            if (i % 9 == 0)
            {
                store.RemoveMsg((ulong)i / 2 + 1);
            }
        }
        store.Stop();
        var path = CrashStores.BlockPath(1);
        using var file = fs.Open(path, StoreFileMode.Open);
        var bytes = file.ReadAll();
        foreach (var d in new[] { "/crash/a", "/crash/b", "/crash/c" })
        {
            fs.CreateDirectory(d);
        }

        Assert.True(bytes.Length > 1_000_000);
        BlockIndexFile.Write(fs, "/crash/a/0000000001.blk", bytes, bytes.Length);
        BlockIndexFile.WriteFromFile(fs, "/crash/b/0000000001.blk", file, bytes.Length);
        var fromMemory = fs.Open("/crash/a/0000000001.idx", StoreFileMode.Open).ReadAll();
        var fromFile = fs.Open("/crash/b/0000000001.idx", StoreFileMode.Open).ReadAll();
        Assert.Equal(fromMemory, fromFile);
        Assert.NotNull(BlockIndexFile.TryLoad(fs, "/crash/b/0000000001.blk", bytes.Length));

        // A block that does not parse to its end gets no index (recovery scans it instead).
        bytes[bytes.Length / 2] ^= 0x40;
        using (var damaged = fs.Open("/crash/c/0000000001.blk", StoreFileMode.Create))
        {
            damaged.Write(bytes, 0);
            BlockIndexFile.WriteFromFile(fs, "/crash/c/0000000001.blk", damaged, bytes.Length);
        }
        Assert.False(fs.FileExists("/crash/c/0000000001.idx"));
    }

    [Fact]
    public void ThePoolKeepsABoundedAmount()
    {
        var arrays = Enumerable.Range(0, 12).Select(_ => BlockBufferPool.Rent(8 << 20)).ToList();
        foreach (var a in arrays)
        {
            BlockBufferPool.Return(a);
        }
        Assert.True(BlockBufferPool.RetainedBytes <= BlockBufferPool.MaxRetainedBytes);
        // Not pooled: a size the pool does not hand out.
        BlockBufferPool.Return(new byte[5000]);
        Assert.True(BlockBufferPool.RetainedBytes <= BlockBufferPool.MaxRetainedBytes);
    }
}
