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
        Storage.IO.DurableDirectory.Create(directory);
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

    /// <summary>fsync of a directory, so a new, renamed or removed entry in it is durable (no-op where unsupported).</summary>
    public static void SyncDirectory(string directory) => Storage.IO.DurableDirectory.Sync(directory);
}
