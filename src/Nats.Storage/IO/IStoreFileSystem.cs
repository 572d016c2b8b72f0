namespace Nats.Storage.IO;

/// <summary>How <see cref="IStoreFileSystem.Open"/> treats an existing or missing file.</summary>
internal enum StoreFileMode
{
    /// <summary>Opens an existing file; fails when it is missing.</summary>
    Open,

    /// <summary>Opens the file, creating it empty when missing.</summary>
    OpenOrCreate,

    /// <summary>Creates the file, truncating it to empty when it exists.</summary>
    Create,
}

/// <summary>
/// Every file operation the file store performs (open, read, write, truncate, sync, rename, delete,
/// directory sync) goes through this seam, so durability can be tested with a layer that simulates
/// power loss (drops whatever was not synced) and the store's sync ordering can be checked.
/// Paths are absolute. Implementations are thread-safe.
/// </summary>
internal interface IStoreFileSystem
{
    IStoreFile Open(string path, StoreFileMode mode);

    bool FileExists(string path);

    /// <summary>Full paths of the files in <paramref name="directory"/> whose names end with <paramref name="suffix"/>.</summary>
    IReadOnlyList<string> ListFiles(string directory, string suffix);

    /// <summary>Renames a file, atomically replacing <paramref name="to"/> if it exists (rename(2)).
    /// Not durable until the directory is synced.</summary>
    void Rename(string from, string to);

    /// <summary>Deletes a file; a missing file is not an error. Not durable until the directory is synced.</summary>
    void Delete(string path);

    void CreateDirectory(string path);

    /// <summary>Deletes a directory and everything under it; a missing directory is not an error.</summary>
    void DeleteDirectory(string path);

    /// <summary>Makes the directory's entries (files created, renamed or deleted in it) durable.</summary>
    void SyncDirectory(string path);
}

/// <summary>An open file: positional reads and writes (no shared file pointer), so readers and the
/// sync loop never race a writer over a position.</summary>
internal interface IStoreFile : IDisposable
{
    string Path { get; }

    long Length { get; }

    /// <summary>Reads up to <paramref name="buffer"/>.Length bytes at <paramref name="offset"/>; 0 at end of file.</summary>
    int Read(Span<byte> buffer, long offset);

    /// <summary>Writes all of <paramref name="data"/> at <paramref name="offset"/> (to the OS page cache).</summary>
    void Write(ReadOnlySpan<byte> data, long offset);

    void SetLength(long length);

    /// <summary>Puts the file's written data, and the size needed to read it back, on stable storage
    /// (fdatasync). Directory entries need <see cref="IStoreFileSystem.SyncDirectory"/>.</summary>
    void Sync();
}

internal static class StoreFileExtensions
{
    /// <summary>Reads the whole file (small files: indexes, metadata).</summary>
    public static byte[] ReadAll(this IStoreFile file)
    {
        var buf = new byte[file.Length];
        var read = 0;
        while (read < buf.Length)
        {
            var n = file.Read(buf.AsSpan(read), read);
            if (n <= 0)
            {
                return buf[..read];
            }

            read += n;
        }
        return buf;
    }
}
