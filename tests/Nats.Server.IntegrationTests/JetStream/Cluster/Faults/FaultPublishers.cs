using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// Asynchronous publishers for a fault trial: one connection per server, each with several publishes in flight,
/// every payload unique (and its own Nats-Msg-Id) and retried until acknowledged, every PubAck recorded with its
/// sequence and time. The connections are made by the three client libraries in turn (NATS.Net in this process,
/// nats.go and nats.js as child processes: tests/go/faultpub, tests/js/faultpub.mjs), since each retries and
/// reconnects in its own way. The NATS.Net and nats.js connections stay on their server, so a publisher on a frozen
/// or cut-off server waits for it, as an application pinned to that server would; nats.go 1.22 cannot ignore the
/// servers it learns of, so its connection may move.
/// </summary>
internal sealed class FaultPublishers : IAsyncDisposable
{
    public const string Subject = "jep";

    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly ConcurrentQueue<TimeSpan> _ackTimes = new();
    private readonly List<Task> _loops = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly CancellationTokenSource _abandon = new();
    private readonly List<NatsConnection> _connections = [];
    private readonly List<(ClientProgram Program, Task Reader)> _programs = [];
    private int _errors;
    private int _disposed;
    private TaskCompletionSource _acked = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Payload → the sequence its PubAck (or "duplicate" answer) named.</summary>
    public ConcurrentDictionary<string, ulong> Acked { get; } = new();

    public int Errors => Volatile.Read(ref _errors);

    public ConcurrentDictionary<string, int> ErrorKinds { get; } = new();

    public TimeSpan Elapsed => _clock.Elapsed;

    /// <summary>The client library of the publisher on the <paramref name="index"/>th server.</summary>
    public static string ClientOf(int index) => Clients[index % Clients.Length];

    private static readonly string[] Clients = ["NATS.Net", "nats.go", "nats.js"];

    /// <summary>Starts <paramref name="inFlight"/> publish loops on a connection to each of <paramref name="servers"/>.</summary>
    public async Task StartAsync(IEnumerable<ClusterServer> servers, int inFlight, CancellationToken token)
    {
        var index = 0;
        foreach (var server in servers)
        {
            var prefix = $"{server.Name}{index}-";
            if (ClientOf(index) != "NATS.Net")
            {
                var url = $"nats://app:pass@127.0.0.1:{server.ClientPort}";
                var client = ClientOf(index);
                var program = await ClientProgram.StartAsync(client, "faultpub", "faultpub.mjs",
                    [url, Subject, prefix, inFlight.ToString(CultureInfo.InvariantCulture)]);
                // Publishing starts only once every publisher is connected: a slow child start must not meet the fault.
                if (await program.ReadLineAsync(token) != "READY")
                {
                    var (exit, stderr) = await program.WaitForExitAsync(token);
                    throw new InvalidOperationException($"the {client} publisher did not connect ({exit}): {stderr}");
                }
                _programs.Add((program, Task.Run(() => ReadAcksAsync(program, client), CancellationToken.None)));
                index++;
                continue;
            }
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
                var loopPrefix = $"{prefix}{loop}-";
                var loopToken = CancellationTokenSource.CreateLinkedTokenSource(token, _abandon.Token).Token;
                _loops.Add(Task.Run(() => LoopAsync(js, loopPrefix, loopToken), CancellationToken.None));
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

    /// <summary>Stops starting new publishes; the ones in flight are retried until acknowledged (or <paramref name="token"/>
    /// ends). After <paramref name="giveUpAfter"/> (a cluster that does not recover) they are abandoned unacknowledged.</summary>
    public async Task StopAsync(CancellationToken token, TimeSpan? giveUpAfter = null)
    {
        await _stop.CancelAsync();
        try
        {
            foreach (var (program, _) in _programs)
            {
                try
                {
                    await program.AnswerAsync("STOP");
                }
                catch (IOException)
                {
                    // It exited already: its reader says why.
                }
            }
            var all = Task.WhenAll(_loops.Concat(_programs.Select(p => p.Reader)));
            try
            {
                await all.WaitAsync(giveUpAfter ?? Timeout.InfiniteTimeSpan, token);
            }
            catch (TimeoutException)
            {
                await _abandon.CancelAsync();
            }
        }
        finally
        {
            await DisposeAsync();
        }
    }

    /// <summary>Closes the connections and kills a child still running (a trial that failed or ran out of time).</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }
        await _stop.CancelAsync();
        foreach (var nc in _connections)
        {
            await nc.DisposeAsync();
        }
        foreach (var (program, _) in _programs)
        {
            await program.DisposeAsync();
        }
    }

    /// <summary>Records a child publisher's "A &lt;payload&gt; &lt;seq&gt;" lines until its "DONE &lt;errors&gt;".</summary>
    private async Task ReadAcksAsync(ClientProgram program, string client)
    {
        while (await program.ReadLineAsync(CancellationToken.None) is { } line)
        {
            var parts = line.Split(' ');
            if (parts is ["A", var payload, var seq])
            {
                Record(payload, ulong.Parse(seq, CultureInfo.InvariantCulture));
            }
            else if (parts is ["DONE", var errors])
            {
                var count = int.Parse(errors, CultureInfo.InvariantCulture);
                Interlocked.Add(ref _errors, count);
                ErrorKinds.AddOrUpdate($"{client} retries", count, (_, n) => n + count);
                return;
            }
        }
        var (exit, stderr) = await program.WaitForExitAsync(CancellationToken.None);
        throw new InvalidOperationException($"the {client} publisher exited ({exit}) before it was stopped: {stderr}");
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
