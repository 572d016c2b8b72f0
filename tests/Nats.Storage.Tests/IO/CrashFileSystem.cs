using Nats.Storage.IO;

namespace Nats.Storage.Tests.IO;

/// <summary>
/// An in-memory file system that remembers what is durable, in the spirit of SQLite's crash-simulating
/// test VFS. Writes land in a file's current content; <see cref="IStoreFile.Sync"/> makes the file's
/// content and size durable; creates, renames and deletes are durable only after the directory is
/// synced. <see cref="Crash"/> simulates a power loss: every page written since its file's last sync is
/// independently kept, lost, or torn (a prefix of the new bytes over the old), an unsynced size change
/// may land anywhere between the old and new size (zero-filled where no data arrived), and each
/// directory keeps a random prefix of its unsynced entry changes. Handles opened before the crash fail
/// from then on, as the process that held them is gone. Directories themselves are always durable.
/// </summary>
internal sealed class CrashFileSystem : IStoreFileSystem
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, Inode> _names = [];
    private readonly Dictionary<string, Inode> _durableNames = [];
    private readonly Dictionary<string, List<(string Name, Inode? Target)>> _pendingDirOps = [];
    private readonly HashSet<string> _dirs = [];
    private int _epoch;
    private int _opsUntilFreeze = -1;

    public CrashFileSystem(int pageSize = 512) => PageSize = pageSize;

    public int PageSize { get; }

    /// <summary>Counts of operations, for tests that check the store's sync discipline.</summary>
    public int FileSyncs { get; private set; }
    public int DirectorySyncs { get; private set; }
    public int Writes { get; private set; }

    /// <summary>Every mutating operation since the last <see cref="Crash"/>, in order (kind and path).</summary>
    public List<(string Op, string Path)> Log { get; } = [];

    /// <summary>The "power" fails after this many more mutating operations: that one and every later
    /// one throws, as if the machine stopped in the middle of the store call.</summary>
    public void FreezeAfter(int operations)
    {
        lock (_lock)
        {
            _opsUntilFreeze = operations;
        }
    }

    /// <summary>Until disposed, syncs of files whose names end with <paramref name="suffix"/> wait
    /// (the disk is slow for them); everything else proceeds.</summary>
    public IDisposable HoldSyncs(string suffix)
    {
        var gate = new SyncGate(suffix);
        lock (_lock)
        {
            _gate = gate;
        }

        return gate;
    }

    private SyncGate? _gate;
    private string? _failSyncSuffix;

    /// <summary>The next sync of a file whose name ends with <paramref name="suffix"/> fails once with
    /// EIO, as Linux reports a writeback error: the file's dirty pages are marked clean without reaching
    /// the disk, so a later sync of that file succeeds and still does not make them durable (until they
    /// are written again).</summary>
    public void FailSyncOnce(string suffix)
    {
        lock (_lock)
        {
            _failSyncSuffix = suffix;
        }
    }

    /// <summary>Syncs currently waiting at a <see cref="HoldSyncs"/> gate.</summary>
    public int HeldSyncs => _gate?.Waiting ?? 0;

    private sealed class SyncGate(string suffix) : IDisposable
    {
        private readonly ManualResetEventSlim _open = new();
        private int _waiting;

        public int Waiting => Volatile.Read(ref _waiting);

        public void WaitIfHeld(string path)
        {
            if (path.EndsWith(suffix, StringComparison.Ordinal))
            {
                Interlocked.Increment(ref _waiting);
                _open.Wait();
                Interlocked.Decrement(ref _waiting);
            }
        }

        public void Dispose() => _open.Set();
    }

    public bool Frozen
    {
        get
        {
            lock (_lock)
            {
                return _opsUntilFreeze == 0;
            }
        }
    }

    public IStoreFile Open(string path, StoreFileMode mode)
    {
        lock (_lock)
        {
            if (!_names.TryGetValue(path, out var inode))
            {
                if (mode == StoreFileMode.Open)
                {
                    throw new FileNotFoundException("no such file", path);
                }

                Mutate("create", path);
                inode = new Inode();
                _names[path] = inode;
                DirOp(path, inode);
            }
            else if (mode == StoreFileMode.Create)
            {
                Mutate("truncate", path);
                inode.SetLength(0, PageSize);
            }
            return new Handle(this, path, inode, _epoch);
        }
    }

    public bool FileExists(string path)
    {
        lock (_lock)
        {
            return _names.ContainsKey(path);
        }
    }

    public IReadOnlyList<string> ListFiles(string directory, string suffix)
    {
        lock (_lock)
        {
            return _names.Keys.Where(p => Path.GetDirectoryName(p) == directory && p.EndsWith(suffix, StringComparison.Ordinal)).ToArray();
        }
    }

    public void Rename(string from, string to)
    {
        lock (_lock)
        {
            if (!_names.Remove(from, out var inode))
            {
                throw new FileNotFoundException("no such file", from);
            }

            Mutate("rename", from + " -> " + to);
            if (Path.GetDirectoryName(from) != Path.GetDirectoryName(to))
            {
                throw new NotSupportedException("renames across directories are not modelled");
            }

            _names[to] = inode;
            DirOp(from, null);
            DirOp(to, inode);
        }
    }

    public void Delete(string path)
    {
        lock (_lock)
        {
            if (!_names.Remove(path))
            {
                return;
            }

            Mutate("delete", path);
            DirOp(path, null);
        }
    }

    public void CreateDirectory(string path)
    {
        lock (_lock)
        {
            for (var d = path; !string.IsNullOrEmpty(d); d = Path.GetDirectoryName(d))
            {
                _dirs.Add(d);
            }
        }
    }

    public void DeleteDirectory(string path)
    {
        lock (_lock)
        {
            // The subtree goes with the parent's entry: its removal is durable once the parent is synced.
            var parent = Path.GetDirectoryName(path)!;
            foreach (var p in _names.Keys.Where(p => p.StartsWith(path + "/", StringComparison.Ordinal)).ToArray())
            {
                _names.Remove(p);
                DirOp(p, null, parent);
            }
            _dirs.RemoveWhere(d => d == path || d.StartsWith(path + "/", StringComparison.Ordinal));
        }
    }

    public void SyncDirectory(string path)
    {
        lock (_lock)
        {
            Mutate("syncdir", path);
            DirectorySyncs++;
            if (_pendingDirOps.Remove(path, out var ops))
            {
                foreach (var (name, target) in ops)
                {
                    Apply(name, target);
                }
            }
        }
    }

    /// <summary>Whether the directory entry for <paramref name="path"/> is durable (for ordering tests).</summary>
    public bool IsEntryDurable(string path)
    {
        lock (_lock)
        {
            return _durableNames.TryGetValue(path, out var d) && _names.TryGetValue(path, out var c) && ReferenceEquals(d, c);
        }
    }

    /// <summary>Whether <paramref name="path"/> would survive a power loss exactly as it is now:
    /// its directory entry and every byte and its size are durable.</summary>
    public bool IsDurable(string path)
    {
        lock (_lock)
        {
            return _names.TryGetValue(path, out var c) && _durableNames.TryGetValue(path, out var d)
                   && ReferenceEquals(c, d) && c.IsClean;
        }
    }

    /// <summary>Whether the deletion of <paramref name="path"/> would survive a power loss.</summary>
    public bool IsDurablyGone(string path)
    {
        lock (_lock)
        {
            return !_names.ContainsKey(path) && !_durableNames.ContainsKey(path);
        }
    }

    /// <summary>Simulates a power loss and reboot; with <paramref name="dropAllUnsynced"/> every unsynced
    /// change is lost (files cut exactly where they were last synced). Returns what was dropped.</summary>
    public string Crash(Random rng, bool dropAllUnsynced = false)
    {
        lock (_lock)
        {
            _epoch++;
            _opsUntilFreeze = -1;
            Log.Clear();
            foreach (var (dir, ops) in _pendingDirOps)
            {
                var keep = dropAllUnsynced ? 0 : rng.Next(ops.Count + 1);
                for (var i = 0; i < keep; i++)
                {
                    Apply(ops[i].Name, ops[i].Target);
                }
            }
            _pendingDirOps.Clear();
            _names.Clear();
            foreach (var (name, inode) in _durableNames)
            {
                _names[name] = inode;
            }

            var lost = 0;
            foreach (var inode in _names.Values.Distinct())
            {
                lost += inode.Crash(rng, PageSize, dropAllUnsynced);
            }

            return $"{lost} unsynced pages lost or torn";
        }
    }

    private void Apply(string name, Inode? target)
    {
        if (target is null)
        {
            _durableNames.Remove(name);
        }
        else
        {
            _durableNames[name] = target;
        }
    }

    private void DirOp(string path, Inode? target, string? inDirectory = null)
    {
        var dir = inDirectory ?? Path.GetDirectoryName(path)!;
        if (!_dirs.Contains(dir))
        {
            throw new DirectoryNotFoundException(dir);
        }

        if (!_pendingDirOps.TryGetValue(dir, out var ops))
        {
            _pendingDirOps[dir] = ops = [];
        }

        ops.Add((path, target));
    }

    /// <summary>Under the lock, before every mutating operation.</summary>
    private void Mutate(string op, string path)
    {
        if (_opsUntilFreeze == 0)
        {
            throw new IOException("simulated power loss");
        }

        if (_opsUntilFreeze > 0)
        {
            _opsUntilFreeze--;
        }

        Log.Add((op, path));
    }

    private sealed class Inode
    {
        private byte[] _data = [];
        private byte[] _durable = [];
        private readonly HashSet<long> _dirtyPages = [];

        // Pages a failed sync marked clean without writing them: no later sync makes them durable
        // unless they are written again.
        private readonly HashSet<long> _lostPages = [];

        public long Length { get; private set; }
        public long DurableLength { get; private set; }

        public int Read(Span<byte> buffer, long offset)
        {
            if (offset >= Length)
            {
                return 0;
            }

            var n = (int)Math.Min(buffer.Length, Length - offset);
            _data.AsSpan((int)offset, n).CopyTo(buffer);
            return n;
        }

        public void Write(ReadOnlySpan<byte> data, long offset, int pageSize)
        {
            var end = offset + data.Length;
            Grow(end);
            data.CopyTo(_data.AsSpan((int)offset));
            for (var p = offset / pageSize; p * pageSize < end; p++)
            {
                _dirtyPages.Add(p);
                _lostPages.Remove(p);
            }

            if (end > Length)
            {
                Length = end;
            }
        }

        public void SetLength(long length, int pageSize)
        {
            Grow(length);
            if (length < Length)
            {
                _data.AsSpan((int)length, (int)(Length - length)).Clear();
            }

            for (var p = Math.Min(length, Length) / pageSize; p * pageSize < Math.Max(length, Length); p++)
            {
                _dirtyPages.Add(p);
            }

            Length = length;
        }

        public void FailSync()
        {
            _lostPages.UnionWith(_dirtyPages);
            _dirtyPages.Clear();
        }

        public void Sync(int pageSize)
        {
            if (_durable.Length < _data.Length)
            {
                Array.Resize(ref _durable, _data.Length);
            }

            var kept = new List<(long Page, byte[] Bytes)>();
            foreach (var p in _lostPages)
            {
                var start = (int)Math.Min(p * pageSize, _durable.Length);
                kept.Add((p, _durable.AsSpan(start, Math.Min(pageSize, _durable.Length - start)).ToArray()));
            }
            _data.AsSpan(0, (int)Length).CopyTo(_durable);
            foreach (var (p, bytes) in kept)
            {
                bytes.CopyTo(_durable.AsSpan((int)(p * pageSize)));
            }
            _durable.AsSpan((int)Length).Clear();
            _dirtyPages.Clear();
            DurableLength = Length;
        }

        public bool IsClean => _dirtyPages.Count == 0 && Length == DurableLength;

        public int Crash(Random rng, int pageSize, bool dropAll)
        {
            var changed = 0;
            var newLength = DurableLength;
            if (Length != DurableLength && !dropAll)
            {
                newLength = rng.Next(3) switch
                {
                    0 => DurableLength,
                    1 => Length,
                    _ => Math.Min(DurableLength, Length) + (long)(rng.NextDouble() * Math.Abs(Length - DurableLength)),
                };
            }
            var result = new byte[Math.Max(newLength, 1) + pageSize];
            _durable.AsSpan(0, (int)Math.Min(DurableLength, newLength)).CopyTo(result);
            foreach (var p in _dirtyPages)
            {
                var start = p * pageSize;
                if (start >= newLength)
                {
                    continue;
                }

                var end = Math.Min(start + pageSize, newLength);
                var len = (int)(end - start);
                var current = _data.AsSpan((int)Math.Min(start, _data.Length), (int)Math.Max(0, Math.Min(len, _data.Length - start)));
                switch (dropAll ? 0 : rng.Next(4))
                {
                    case 0: // the page never reached the disk
                        changed++;
                        break;
                    case 1: // torn: the first part of the page is new, the rest old (or zero)
                        var cut = rng.Next(len + 1);
                        current[..Math.Min(cut, current.Length)].CopyTo(result.AsSpan((int)start));
                        changed++;
                        break;
                    default:
                        current.CopyTo(result.AsSpan((int)start));
                        break;
                }
            }
            _data = result;
            _durable = (byte[])result.Clone();
            Length = DurableLength = newLength;
            _dirtyPages.Clear();
            _lostPages.Clear();
            return changed;
        }

        private void Grow(long size)
        {
            if (size <= _data.Length)
            {
                return;
            }

            Array.Resize(ref _data, (int)Math.Max(size, _data.Length * 2L));
        }
    }

    private sealed class Handle(CrashFileSystem fs, string path, Inode inode, int epoch) : IStoreFile
    {
        private bool _disposed;

        public string Path => path;

        public long Length
        {
            get
            {
                lock (fs._lock)
                {
                    Check(mutating: false);
                    return inode.Length;
                }
            }
        }

        public int Read(Span<byte> buffer, long offset)
        {
            lock (fs._lock)
            {
                Check(mutating: false);
                return inode.Read(buffer, offset);
            }
        }

        public void Write(ReadOnlySpan<byte> data, long offset)
        {
            lock (fs._lock)
            {
                Check(mutating: true);
                fs.Mutate("write", path);
                fs.Writes++;
                inode.Write(data, offset, fs.PageSize);
            }
        }

        public void SetLength(long length)
        {
            lock (fs._lock)
            {
                Check(mutating: true);
                fs.Mutate("setlength", path);
                inode.SetLength(length, fs.PageSize);
            }
        }

        public void Sync()
        {
            SyncGate? gate;
            lock (fs._lock)
            {
                Check(mutating: true);
                if (fs._failSyncSuffix is { } failing && path.EndsWith(failing, StringComparison.Ordinal))
                {
                    fs._failSyncSuffix = null;
                    fs.Mutate("sync-failed", path);
                    inode.FailSync();
                    throw new IOException("Input/output error (simulated EIO on fsync)");
                }
                gate = fs._gate;
            }

            gate?.WaitIfHeld(path);
            lock (fs._lock)
            {
                Check(mutating: true);
                fs.Mutate("sync", path);
                fs.FileSyncs++;
                inode.Sync(fs.PageSize);
            }
        }

        public void Dispose() => _disposed = true;

        private void Check(bool mutating)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (epoch != fs._epoch)
            {
                throw new IOException("simulated power loss: this handle belongs to the process that crashed");
            }

            _ = mutating;
        }
    }
}
