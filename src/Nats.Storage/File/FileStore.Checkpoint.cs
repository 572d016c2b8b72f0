using System.Diagnostics;
using Nats.Storage.IO;

namespace Nats.Storage.File;

/// <summary>
/// The stream state file written while the store runs, so that an open after a crash replays only what
/// was written since (Go keeps per-block index files current for the same reason and rescans only the
/// last block). A sync round takes the state under the store lock right after handing every pending
/// byte to the OS; once that round and every earlier one are durable, the state describes only durable
/// bytes, and the sync thread that completed it writes the state to a temporary file, fsyncs it,
/// renames it over <c>index.db</c> (under the lock, so a stop's own state file is never replaced) and
/// fsyncs the directory, after the round's waiters were released. Any state file that ever becomes
/// durable stays a valid starting point (see FileStore.StateFile.cs), so a torn or lost checkpoint only
/// means a longer replay. Sync-always stores take none while running (their rounds run inline, under
/// the lock).
/// </summary>
internal sealed partial class FileStore
{
    private DateTimeOffset _lastCheckpoint;
    private TimeSpan _checkpointGap;
    private bool _checkpointBusy;     // taken, not yet written (or being written)
    private byte[]? _checkpointReady; // durable content, waiting for a writer
    private int _checkpointReadyEpoch;

    // Bumped when a block's bytes change in place in a way a replay after a state cannot see (an erased
    // record, a record found damaged): states taken before are never written.
    private int _stateEpoch;

    private void StartCheckpoints()
    {
        _lastCheckpoint = Clock.GetUtcNow();
        _checkpointGap = _opts.CheckpointInterval;
    }

    /// <summary>Under the lock, from a sync round's collection, after every pending byte was handed to the OS.</summary>
    private void TakeCheckpointIfDue(SyncBatch batch)
    {
        if (_checkpointBusy || _failure is not null || _opts.CheckpointInterval < TimeSpan.Zero || !StateSavable
            || (_checkpointGap > TimeSpan.Zero && Clock.GetUtcNow() - _lastCheckpoint < _checkpointGap))
        {
            return;
        }

        var started = Stopwatch.GetTimestamp();
        try
        {
            batch.Checkpoint = SerializeState();
            batch.CheckpointEpoch = _stateEpoch;
        }
        catch (IOException e)
        {
            Warn?.Invoke($"stream state checkpoint not taken: {e.Message}");
            return;
        }
        _checkpointBusy = true;
        _lastCheckpoint = Clock.GetUtcNow();
        // A store with very many subjects or index chunks holds the lock longer to take a state: the
        // checkpoints then come less often, so taking them costs at most ~2% of the lock's time.
        if (_opts.CheckpointInterval > TimeSpan.Zero)
        {
            var took = Stopwatch.GetElapsedTime(started);
            _checkpointGap = took * 50 > _opts.CheckpointInterval ? took * 50 : _opts.CheckpointInterval;
        }
    }

    /// <summary>Under the lock: the round that took the state and every earlier one are durable.</summary>
    private void CheckpointDurable(SyncBatch batch)
    {
        if (batch.Checkpoint is not { } state)
        {
            return;
        }

        if (batch.CheckpointEpoch == _stateEpoch)
        {
            (_checkpointReady, _checkpointReadyEpoch) = (state, batch.CheckpointEpoch);
        }
        else
        {
            _checkpointBusy = false;
        }
    }

    /// <summary>
    /// Under the lock, before a block's bytes change in place (an erase overwrites a record; a record
    /// found damaged is dropped): a state taken before would count that message, and its tombstone,
    /// replayed after the state, could not find the record to remove it. The state file is removed
    /// durably first and states already taken are dropped; the next checkpoint describes the change.
    /// </summary>
    private void InvalidateState()
    {
        _stateEpoch++;
        _checkpointReady = null;
        if (_recovering || _failure is not null)
        {
            return;
        }

        try
        {
            DeleteStateFile();
        }
        catch (IOException e)
        {
            Fail("removal of the stream state file", e);
        }
    }

    /// <summary>On the sync thread, outside the lock, after a round completed: writes a ready state.</summary>
    private void WriteReadyCheckpoint()
    {
        byte[]? state;
        int epoch;
        lock (Sync)
        {
            (state, epoch) = (_checkpointReady, _checkpointReadyEpoch);
            _checkpointReady = null;
            if (state is null || Closed)
            {
                return;
            }
        }
        var renamed = false;
        try
        {
            WriteStateBytes(CheckpointTmpPath, state);
            lock (Sync)
            {
                if (!Closed && _failure is null && epoch == _stateEpoch)
                {
                    _fs.Rename(CheckpointTmpPath, StatePath);
                    renamed = true;
                    CheckpointsWritten++;
                }
            }
            if (renamed)
            {
                _fs.SyncDirectory(_opts.Directory);
            }
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or UnauthorizedAccessException)
        {
            // Nothing acknowledged depends on a checkpoint: the next open replays from an older one or
            // from the blocks.
            lock (Sync)
            {
                if (!Closed)
                {
                    Warn?.Invoke($"stream state checkpoint not written: {e.Message}");
                }
            }
        }
        finally
        {
            lock (Sync)
            {
                _checkpointBusy = false;
            }
        }
    }
}
