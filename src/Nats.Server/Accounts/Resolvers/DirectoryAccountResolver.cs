namespace Nats.Server.Accounts.Resolvers;

/// <summary>
/// Go's DirAccResolver (<c>type: full</c>) and CacheDirAccResolver (<c>type: cache</c>) over a
/// DirJWTStore without sharding: one file per account, <c>&lt;dir&gt;/&lt;account key&gt;.jwt</c>.
/// Without routes there is no peer to fetch from or sync with, so both serve what the directory holds.
/// </summary>
internal sealed class DirectoryAccountResolver : IAccountResolver
{
    private const string Extension = ".jwt";
    private readonly string _directory;
    private readonly Lock _gate = new();

    public DirectoryAccountResolver(string directory, bool full, bool allowDelete)
    {
        _directory = directory;
        TracksUpdates = full;
        AllowDelete = allowDelete;
        Directory.CreateDirectory(directory);
    }

    public bool TracksUpdates { get; }

    public bool AllowDelete { get; }

    public string? Fetch(string accountKey)
    {
        if (!IsFileName(accountKey))
        {
            return null;
        }
        try
        {
            return File.ReadAllText(PathOf(accountKey)).Trim();
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    public void Store(string accountKey, string jwt)
    {
        if (!IsFileName(accountKey))
        {
            return;
        }
        lock (_gate)
        {
            // Write then rename, so a reader never sees half a JWT.
            var path = PathOf(accountKey);
            var temp = path + ".tmp";
            File.WriteAllText(temp, jwt);
            File.Move(temp, path, overwrite: true);
        }
    }

    public IReadOnlyList<string> List()
    {
        lock (_gate)
        {
            return [.. Directory.EnumerateFiles(_directory, "*" + Extension)
                .Select(f => Path.GetFileNameWithoutExtension(f))
                .Order(StringComparer.Ordinal)];
        }
    }

    public bool Delete(string accountKey)
    {
        if (!IsFileName(accountKey))
        {
            return false;
        }
        lock (_gate)
        {
            var path = PathOf(accountKey);
            if (!File.Exists(path))
            {
                return false;
            }
            // Go's RenameDeleted (what allow_delete selects): the JWT stays on disk as <key>.jwt.deleted.
            File.Move(path, path + ".deleted", overwrite: true);
            return true;
        }
    }

    private string PathOf(string accountKey) => Path.Combine(_directory, accountKey + Extension);

    /// <summary>Account keys are base32; anything else must not name a path.</summary>
    private static bool IsFileName(string key) => key.Length > 0 && key.All(char.IsAsciiLetterOrDigit);
}
