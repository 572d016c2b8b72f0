namespace Nats.Storage.IO;

/// <summary>
/// Directory creation that survives a power cut: a new directory's name lives in its parent, so every
/// directory created here has its parent fsynced (POSIX makes no promise otherwise, and the Go server
/// 2.9.10 loses whole streams that way).
/// </summary>
internal static class DurableDirectory
{
    /// <summary>Creates <paramref name="path"/> and any missing ancestors; returns whether anything was created.</summary>
    public static bool Create(string path)
    {
        path = Path.GetFullPath(path);
        var missing = new List<string>();
        for (var dir = path; !Directory.Exists(dir); dir = Path.GetDirectoryName(dir)!)
        {
            missing.Add(dir);
            if (Path.GetDirectoryName(dir) is null)
            {
                break;
            }
        }
        if (missing.Count == 0)
        {
            return false;
        }

        Directory.CreateDirectory(path);
        // Deepest first: a parent's entry becomes durable only after what it names is, so a cut in between
        // leaves at worst an empty directory, never a name pointing nowhere.
        foreach (var dir in missing)
        {
            if (Path.GetDirectoryName(dir) is { } parent)
            {
                NativeSync.SyncDirectory(parent);
            }
        }
        return true;
    }

    /// <summary>fsync of a directory, so entries created, renamed or removed in it are durable.</summary>
    public static void Sync(string path) => NativeSync.SyncDirectory(path);
}
