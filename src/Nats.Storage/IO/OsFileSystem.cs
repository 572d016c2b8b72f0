using Microsoft.Win32.SafeHandles;

namespace Nats.Storage.IO;

/// <summary>The real file system: SafeFileHandle + RandomAccess, fdatasync and directory fsync.</summary>
internal sealed class OsFileSystem : IStoreFileSystem
{
    public static readonly OsFileSystem Instance = new();

    public IStoreFile Open(string path, StoreFileMode mode)
    {
        var fm = mode switch
        {
            StoreFileMode.Open => FileMode.Open,
            StoreFileMode.OpenOrCreate => FileMode.OpenOrCreate,
            _ => FileMode.Create,
        };
        return new OsFile(path, System.IO.File.OpenHandle(path, fm, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete));
    }

    public bool FileExists(string path) => System.IO.File.Exists(path);

    public IReadOnlyList<string> ListFiles(string directory, string suffix)
        => Directory.Exists(directory) ? Directory.GetFiles(directory, "*" + suffix) : [];

    public void Rename(string from, string to) => System.IO.File.Move(from, to, overwrite: true);

    public void Delete(string path)
    {
        try
        {
            System.IO.File.Delete(path);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }

    public void CreateDirectory(string path) => DurableDirectory.Create(path);

    public void DeleteDirectory(string path)
    {
        try
        {
            Directory.Delete(path, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }

    public void SyncDirectory(string path) => NativeSync.SyncDirectory(path);

    private sealed class OsFile(string path, SafeFileHandle handle) : IStoreFile
    {
        public string Path { get; } = path;

        public long Length => RandomAccess.GetLength(handle);

        public int Read(Span<byte> buffer, long offset) => RandomAccess.Read(handle, buffer, offset);

        public void Write(ReadOnlySpan<byte> data, long offset) => RandomAccess.Write(handle, data, offset);

        public void SetLength(long length) => RandomAccess.SetLength(handle, length);

        public void Sync() => NativeSync.DataSync(handle);

        public void Dispose() => handle.Dispose();
    }
}
