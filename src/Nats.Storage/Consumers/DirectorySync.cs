using System.Runtime.InteropServices;

namespace Nats.Storage.Consumers;

/// <summary>Fsyncs a directory so a file created, renamed or deleted in it survives a power loss; .NET
/// has no API for it (a directory cannot be opened as a FileStream), so this calls open/fsync directly.</summary>
internal static partial class DirectorySync
{
    public static void Sync(string directory)
    {
        if (OperatingSystem.IsWindows())
            return; // NTFS journals directory entries with the file's metadata
        var fd = Open(directory, 0);
        if (fd < 0)
            return;
        try
        {
            _ = Fsync(fd);
        }
        finally
        {
            _ = Close(fd);
        }
    }

    [LibraryImport("libc", EntryPoint = "open", StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync")]
    private static partial int Fsync(int fd);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);
}
