using System.Globalization;
using System.Text;

namespace Nats.Server.Logging;

/// <summary>
/// The log file behind -l/logfile: appends, and when logfile_size_limit is set and exceeded, renames
/// the file to "name.yyyy.MM.dd.HH.mm.ss.nnnnnnnnn" and starts a fresh one, like the Go server's file
/// logger. <see cref="Reopen"/> serves SIGUSR1 (external log rotation tools move the file, then signal).
/// Thread-safe: a signal handler may reopen while a logging thread writes.
/// </summary>
internal sealed class RotatingFileWriter : TextWriter
{
    private readonly string _path;
    private readonly long _limit;
    private readonly Func<DateTime> _clock;
    private readonly Lock _sync = new();
    private FileStream _stream;
    private long _size;

    public RotatingFileWriter(string path, long sizeLimit, Func<DateTime>? clock = null)
    {
        _path = path;
        _limit = sizeLimit;
        _clock = clock ?? (() => DateTime.Now);
        _stream = Open(path);
        _size = _stream.Length;
    }

    public override Encoding Encoding => Encoding.UTF8;

    /// <summary>The file written to.</summary>
    public string Path => _path;

    /// <summary>Size in bytes at which the file is rotated; 0 for never.</summary>
    public long SizeLimit => _limit;

    /// <summary>Path of the last backup made by rotation, if any.</summary>
    public string? LastBackup { get; private set; }

    public override void Write(char value) => Write(value.ToString());

    public override void Write(string? value)
    {
        lock (_sync)
        {
            WriteCore(value);
        }
    }

    private void WriteCore(string? value)
    {
        if (string.IsNullOrEmpty(value))
        {
            return;
        }
        int max = Encoding.UTF8.GetMaxByteCount(value.Length);
        byte[]? rented = null;
        Span<byte> buffer = max <= 1024 ? stackalloc byte[max] : (rented = System.Buffers.ArrayPool<byte>.Shared.Rent(max));
        int n = Encoding.UTF8.GetBytes(value, buffer);
        _stream.Write(buffer[..n]);
        if (rented is not null)
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(rented);
        }
        _size += n;
    }

    public override void WriteLine(string? value)
    {
        lock (_sync)
        {
            WriteCore(value);
            WriteCore("\n");
            if (_limit > 0 && _size > _limit)
            {
                Rotate();
            }
        }
    }

    public override void Flush()
    {
        lock (_sync)
        {
            _stream.Flush();
        }
    }

    /// <summary>Closes and reopens the file by name, so a file moved away by logrotate is replaced.</summary>
    public void Reopen()
    {
        lock (_sync)
        {
            _stream.Dispose();
            _stream = Open(_path);
            _size = _stream.Length;
        }
    }

    private void Rotate()
    {
        _stream.Dispose();
        var now = _clock();
        long nanos = now.Ticks % TimeSpan.TicksPerSecond * 100;
        string backup = string.Create(CultureInfo.InvariantCulture,
            $"{_path}.{now:yyyy.MM.dd.HH.mm.ss}.{nanos:D9}");
        File.Move(_path, backup, overwrite: true);
        LastBackup = backup;
        _stream = Open(_path);
        _size = 0;
        WriteCore(string.Create(CultureInfo.InvariantCulture,
            $"[{Environment.ProcessId}] {now:yyyy/MM/dd HH:mm:ss.ffffff} [INF] Rotated log, backup saved as \"{backup}\"\n"));
    }

    private static FileStream Open(string path) => new(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete);

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            lock (_sync)
            {
                _stream.Dispose();
            }
        }
        base.Dispose(disposing);
    }
}
