using System.Collections.Concurrent;
using System.Diagnostics;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// Asynchronous publishers for a fault trial: one NATS.Net connection per server, each with several publishes in
/// flight, every payload unique (and its own Nats-Msg-Id) and retried until acknowledged, every PubAck recorded
/// with its sequence and time. A connection stays on its server, so a publisher on a frozen or cut-off server
/// waits for it, as an application pinned to that server would.
/// </summary>
internal sealed class FaultPublishers
{
    public const string Subject = "jep";

    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly ConcurrentQueue<TimeSpan> _ackTimes = new();
    private readonly List<Task> _loops = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly List<NatsConnection> _connections = [];
    private int _errors;
    private TaskCompletionSource _acked = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Payload → the sequence its PubAck (or "duplicate" answer) named.</summary>
    public ConcurrentDictionary<string, ulong> Acked { get; } = new();

    public int Errors => Volatile.Read(ref _errors);

    public ConcurrentDictionary<string, int> ErrorKinds { get; } = new();

    public TimeSpan Elapsed => _clock.Elapsed;

    /// <summary>Starts <paramref name="inFlight"/> publish loops on a connection to each of <paramref name="servers"/>.</summary>
    public async Task StartAsync(IEnumerable<ClusterServer> servers, int inFlight, CancellationToken token)
    {
        var index = 0;
        foreach (var server in servers)
        {
            var nc = new NatsConnection(ReplicatedStreamTests.App(server) with
            {
                RequestTimeout = TimeSpan.FromSeconds(2),
                ConnectTimeout = TimeSpan.FromSeconds(30),
                // A server that is stopped or restarting is waited for: the connection knows no other.
                MaxReconnectRetry = -1,
                ReconnectWaitMin = TimeSpan.FromMilliseconds(100),
                ReconnectWaitMax = TimeSpan.FromMilliseconds(500),
            });
            await nc.ConnectAsync();
            _connections.Add(nc);
            var js = new NatsJSContext(nc);
            for (var loop = 0; loop < inFlight; loop++)
            {
                var prefix = $"{server.Name}{index}-{loop}-";
                _loops.Add(Task.Run(() => LoopAsync(js, prefix, token), CancellationToken.None));
            }
            index++;
        }
    }

    /// <summary>Waits until <paramref name="count"/> messages are acknowledged in all.</summary>
    public async Task WaitForAcksAsync(int count, CancellationToken token)
    {
        while (true)
        {
            var acked = Volatile.Read(ref _acked).Task;
            if (Acked.Count >= count)
            {
                return;
            }
            await acked.WaitAsync(token);
        }
    }

    /// <summary>Waits for <paramref name="more"/> acknowledgements beyond those recorded now, and at least <paramref name="atLeast"/>.</summary>
    public async Task WaitForMoreAcksAsync(int more, TimeSpan atLeast, CancellationToken token)
    {
        var until = Elapsed + atLeast;
        await WaitForAcksAsync(Acked.Count + more, token);
        if (Elapsed < until)
        {
            await Task.Delay(until - Elapsed, token);
        }
    }

    /// <summary>Stops starting new publishes; the ones in flight are retried until acknowledged (or <paramref name="token"/> ends).</summary>
    public async Task StopAsync()
    {
        await _stop.CancelAsync();
        await Task.WhenAll(_loops);
        foreach (var nc in _connections)
        {
            await nc.DisposeAsync();
        }
    }

    /// <summary>The longest stretch without an acknowledgement between <paramref name="from"/> and <paramref name="to"/>.</summary>
    public TimeSpan LongestGap(TimeSpan from, TimeSpan to) => LongestGapAt(from, to).Length;

    /// <summary>The longest stretch without an acknowledgement and when it began (on <see cref="Elapsed"/>'s clock).</summary>
    public (TimeSpan Start, TimeSpan Length) LongestGapAt(TimeSpan from, TimeSpan to)
    {
        var longest = (Start: from, Length: TimeSpan.Zero);
        var previous = from;
        foreach (var t in _ackTimes.Where(t => t >= from && t <= to).Order().Append(to))
        {
            longest = t - previous > longest.Length ? (previous, t - previous) : longest;
            previous = t;
        }
        return longest;
    }

    private async Task LoopAsync(NatsJSContext js, string prefix, CancellationToken token)
    {
        var i = 0;
        while (!_stop.IsCancellationRequested && !token.IsCancellationRequested)
        {
            await PublishOneAsync(js, prefix + i++, token);
        }
    }

    private async Task PublishOneAsync(NatsJSContext js, string payload, CancellationToken token)
    {
        while (!token.IsCancellationRequested)
        {
            try
            {
                var ack = await js.PublishAsync($"{Subject}.{payload[0]}", payload, opts: new NatsJSPubOpts { MsgId = payload }, cancellationToken: token);
                ack.EnsureSuccess();
                Record(payload, ack.Seq);
                return;
            }
            catch (NatsJSDuplicateMessageException e)
            {
                // An earlier attempt was stored though its ack was lost (a leader change, or the wait timed out).
                Record(payload, e.Sequence);
                return;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
            {
                Interlocked.Increment(ref _errors);
                var kind = e.GetType().Name + (e is NatsJSApiException api ? $" {api.Error.ErrCode}" : "");
                ErrorKinds.AddOrUpdate(kind, 1, (_, n) => n + 1);
                if (e is NatsNoRespondersException or NatsJSPublishNoResponseException or NatsConnectionFailedException)
                {
                    // Nobody answers while there is no leader (or the connection is down): do not spin.
                    await Task.Delay(50, CancellationToken.None);
                }
            }
        }
    }

    private void Record(string payload, ulong seq)
    {
        Acked[payload] = seq;
        _ackTimes.Enqueue(_clock.Elapsed);
        Interlocked.Exchange(ref _acked, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
    }
}
