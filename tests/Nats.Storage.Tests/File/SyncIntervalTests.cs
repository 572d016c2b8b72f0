using Nats.Storage.File;

namespace Nats.Storage.Tests;

/// <summary>Interval mode always has a sync timer: a zero interval (<c>sync_interval: "0s"</c>) means Go's
/// file store default of 2 minutes, never unsynced data with no timer at all.</summary>
public sealed class SyncIntervalTests
{
    [Theory]
    [InlineData(0, 120)]
    [InlineData(-1, 120)]
    [InlineData(10, 10)]
    public void IntervalModeArmsItsTimer(int seconds, int expected)
    {
        using var dir = new TempDir();
        var clock = new RecordingClock();
        var store = StreamStores.OpenFile(new StoreConfig { Name = "S" }, new FileStoreOptions
        {
            Directory = dir.Path,
            SyncMode = FileSyncMode.Interval,
            SyncInterval = TimeSpan.FromSeconds(seconds),
            Clock = clock,
        });
        try
        {
            Assert.Contains(TimeSpan.FromSeconds(expected), clock.Periods);
        }
        finally
        {
            store.Stop();
        }
    }

    private sealed class RecordingClock : TimeProvider
    {
        public List<TimeSpan> Periods { get; } = [];

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            lock (Periods)
            {
                Periods.Add(period);
            }
            return new NoTimer();
        }

        private sealed class NoTimer : ITimer
        {
            public bool Change(TimeSpan dueTime, TimeSpan period) => true;
            public void Dispose() { }
            public ValueTask DisposeAsync() => ValueTask.CompletedTask;
        }
    }
}
