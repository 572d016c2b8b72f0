namespace Nats.Storage.File;

/// <summary>
/// A failed fsync or write leaves the page cache's state unknown: Linux marks the pages clean (their
/// data may be gone) and reports the error once per file, so a later fsync of the same file succeeds
/// without them. The store therefore fails as a whole at the first such error: every durability
/// ticket from then on fails (no acknowledgement can depend on the lost pages) and new messages are
/// refused, while reads go on. Reopening the store (a server restart) re-reads the files and fsyncs
/// what recovery found. This is Go's reaction to a write error (the store refuses with the error; Go
/// 2.10 disables JetStream on a disk error) applied to fsync errors, which Go 2.9.10 ignores.
/// </summary>
internal sealed partial class FileStore
{
    private Exception? _failure;

    /// <summary>Why the store refuses writes (null while it accepts them).</summary>
    internal Exception? Failure
    {
        get
        {
            lock (Sync)
            {
                return _failure;
            }
        }
    }

    protected override void ThrowIfReadOnly()
    {
        if (_failure is { } f)
        {
            throw new StoreException(StoreError.WriteFailed, $"{StoreException.TextOf(StoreError.WriteFailed)}: {f.Message}");
        }
    }

    /// <summary>Under the lock: a sync or write of this store failed (<paramref name="operation"/> says
    /// where). Reported once; the group commit fails every ticket from now on.</summary>
    private void Fail(string operation, Exception e)
    {
        if (_failure is not null)
        {
            return;
        }

        _failure = e;
        _commit.Fault(e);
        Report(operation, e);
    }

    /// <summary>The group commit's own round failed (under the lock).</summary>
    private void OnSyncFailed(Exception e)
    {
        if (_failure is not null)
        {
            return;
        }

        _failure = e;
        Report("fsync", e);
    }

    private void Report(string operation, Exception e)
    {
        var text = $"{operation} failed, no further writes are acknowledged and new messages are refused until the stream is reloaded: {e.Message}";
        Warn?.Invoke(text);
        _opts.Failed?.Invoke(text);
    }

    /// <summary>Runs a write or sync of the background or flush path; a failure fails the store instead
    /// of escaping to a timer thread (which only logged it before) or a publisher's read loop.</summary>
    private void Guarded(string operation, Action body)
    {
        try
        {
            body();
        }
        catch (IOException e)
        {
            Fail(operation, e);
        }
    }
}
