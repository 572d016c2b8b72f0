using System.Text.Json;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream;

/// <summary>
/// A stream's <c>meta.inf</c> (created time and config). Written to a temporary file, fsynced, renamed
/// over the old one, and the directory fsynced: a stream whose creation was acknowledged survives a
/// power cut, which the Go server 2.9.10 does not guarantee.
/// </summary>
internal static class StreamMetaFiles
{
    public const string MetaFile = "meta.inf";
    public const string MessagesDir = "msgs";

    public static void Write(string directory, StreamMetaFile meta)
    {
        var created = !System.IO.Directory.Exists(directory);
        System.IO.Directory.CreateDirectory(directory);
        if (created)
        {
            SyncDirectory(Path.GetDirectoryName(directory)!);
        }
        var path = Path.Combine(directory, MetaFile);
        var temp = path + ".tmp";
        var bytes = JsonSerializer.SerializeToUtf8Bytes(meta, JsJsonContext.Default.StreamMetaFile);
        using (var file = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            file.Write(bytes);
            file.Flush(flushToDisk: true);
        }
        File.Move(temp, path, overwrite: true);
        SyncDirectory(directory);
    }

    public static StreamMetaFile? Read(string directory)
    {
        var path = Path.Combine(directory, MetaFile);
        if (!File.Exists(path))
        {
            return null;
        }
        return JsonSerializer.Deserialize(File.ReadAllBytes(path), JsJsonContext.Default.StreamMetaFile);
    }

    /// <summary>fsync of a directory, so a new or renamed entry in it is durable (no-op where unsupported).</summary>
    public static void SyncDirectory(string directory)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        // .NET will not open a directory as a file, so libc does it.
        var fd = Native.open(directory, 0);
        if (fd >= 0)
        {
            Native.fsync(fd);
            Native.close(fd);
        }
    }

    private static class Native
    {
        [System.Runtime.InteropServices.DllImport("libc", SetLastError = true)]
        public static extern int open([System.Runtime.InteropServices.MarshalAs(System.Runtime.InteropServices.UnmanagedType.LPUTF8Str)] string path, int flags);

        [System.Runtime.InteropServices.DllImport("libc", SetLastError = true)]
        public static extern int fsync(int fd);

        [System.Runtime.InteropServices.DllImport("libc", SetLastError = true)]
        public static extern int close(int fd);
    }
}
