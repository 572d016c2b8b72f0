using System.Diagnostics;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// Runs a <see cref="RaftNode"/> on one loop: inbound messages and requests are queued, drained in a batch, then the
/// node ticks and flushes (so the fsync of one batch is shared by all it received: group commit). Everything the
/// node sends goes out from this loop, which owns the transport's publisher.
/// </summary>
internal sealed class RaftRunner : IAsyncDisposable
{
    private static readonly TimeSpan TickInterval = TimeSpan.FromMilliseconds(50);

    private readonly Channel<Action<RaftNode, long>> _work = Channel.CreateUnbounded<Action<RaftNode, long>>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly ILogger _logger;
    private readonly Task _loop;
    private RaftNode? _node;
    private volatile RaftStatus _status = RaftStatus.Initial;

    /// <param name="create">Builds the node, on the loop, given the clock's start.</param>
    public RaftRunner(Func<long, RaftNode> create, ILogger logger)
    {
        _logger = logger;
        _loop = Task.Factory.StartNew(() => RunAsync(create), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap();
    }

    public RaftStatus Status => _status;

    public long Now => _clock.ElapsedMilliseconds;

    public void Deliver(RaftMessageKind kind, byte[] payload) => _work.Writer.TryWrite((node, now) => node.Receive(kind, payload, now));

    public void Post(Action<RaftNode, long> work) => _work.Writer.TryWrite(work);

    /// <summary>Runs a flush soon with nothing else to do (the log's background sync round ended).</summary>
    public void Wake() => _work.Writer.TryWrite(Nothing);

    private static readonly Action<RaftNode, long> Nothing = static (_, _) => { };

    /// <summary>Runs <paramref name="work"/> on the loop and returns its result.</summary>
    public Task<T> Ask<T>(Func<RaftNode, long, T> work)
    {
        var result = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        if (!_work.Writer.TryWrite((node, now) => result.TrySetResult(work(node, now))))
        {
            result.TrySetCanceled();
        }
        return result.Task;
    }

    private async Task RunAsync(Func<long, RaftNode> create)
    {
        var node = create(Now);
        _node = node;
        var reader = _work.Reader;
        var nextTick = 0L;
        while (true)
        {
            var now = Now;
            var wait = node.ApplyPending ? 0 : Math.Max(0, nextTick - now);
            if (wait > 0)
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromMilliseconds(wait));
                try
                {
                    if (!await reader.WaitToReadAsync(timeout.Token).ConfigureAwait(false))
                    {
                        return;
                    }
                }
                catch (OperationCanceledException)
                {
                }
            }
            try
            {
                now = Now;
                while (reader.TryRead(out var work))
                {
                    work(node, now);
                }
                if (now >= nextTick)
                {
                    node.Tick(now);
                    nextTick = now + (long)TickInterval.TotalMilliseconds;
                }
                node.Flush(now);
                _status = Snapshot(node, now);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                _logger.LogError(ex, "RAFT [{Id}] storage failed; the node stops", node.Id);
                return;
            }
            catch (Exception ex)
            {
                _logger.LogError(ex, "RAFT [{Id}] failed; the node stops", node.Id);
                throw;
            }
            if (reader.Completion.IsCompleted)
            {
                return;
            }
        }
    }

    private static RaftStatus Snapshot(RaftNode node, long now)
    {
        var peers = new List<RaftPeerStatus>(node.Peers.Count);
        foreach (var peer in node.Peers)
        {
            if (peer == node.Id)
            {
                continue;
            }
            var progress = node.ProgressOf(peer);
            peers.Add(progress is null
                ? new RaftPeerStatus(peer, false, -1, 0)
                : new RaftPeerStatus(peer, progress.Match >= node.CommitIndex, now - progress.LastSeen, node.LastIndex - Math.Min(progress.Match, node.LastIndex)));
        }
        return new RaftStatus(node.Role, node.Term, node.Leader, node.CommitIndex, node.AppliedIndex, node.LastIndex, node.ClusterSize, peers);
    }

    public async ValueTask DisposeAsync()
    {
        _work.Writer.TryComplete();
        try
        {
            await _loop.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            _logger.LogWarning("RAFT loop did not stop within 5s");
        }
    }
}
