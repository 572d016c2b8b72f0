using System.Collections.Concurrent;
using Nats.LoadBench.Client;
using Nats.LoadBench.Scenarios;
using Nats.LoadBench.Servers;
using NATS.Client.Core;

namespace Nats.LoadBench.Kit;

/// <summary>
/// One run of one row against one server: hands out the connections a row needs, watches every
/// one of them for a cut, and closes them all at the end. A row only connects, publishes,
/// subscribes and counts; whether a cut or a server error fails the run is decided here, the
/// same way for every row.
/// </summary>
/// <remarks>
/// A NATS.Net subscriber whose channel is full has stopped reading its socket, so it may not see its
/// own cut for a long time: the server's log (a "Slow Consumer" line) counts as a cut at once.
/// </remarks>
internal sealed class RunContext(Endpoint endpoint, RunSettings settings, string row, Func<string?>? serverProblem = null, ServerProcess? server = null) : IAsyncDisposable
{
    private readonly List<NatsConnection> _nats = [];
    private readonly List<(string Role, RawConnection Conn)> _raw = [];
    private readonly ConcurrentQueue<string> _problems = new();

    // Connections closed on purpose before a server restart: their disconnect events come late.
    private readonly HashSet<NatsConnection> _retired = [];
    private volatile bool _closing;

    public Endpoint Endpoint { get; private set; } = endpoint;

    public RunSettings Settings { get; } = settings;

    /// <summary>kill -9 of cluster server i (the failover rows); null against the sink.</summary>
    public Action<int>? KillServer { get; init; }

    /// <summary>A subject no other run on the same server has used.</summary>
    public string Subject(string kind) => $"bench.{kind}.{Settings.RunId}";

    /// <summary>A NATS.Net connection (the client users run) with the harness's options, watched for cuts.</summary>
    /// <param name="watched">False for a connection the row expects to lose (to a server it kills): its cut is no failure.</param>
    public async Task<NatsConnection> ConnectAsync(string role, Transport transport = Transport.Plain, int server = 0, bool watched = true)
    {
        var conn = new NatsConnection(NatsClients.Options(Endpoint.Server(server), transport, $"loadbench-{row}-{role}"));
        lock (_nats)
        {
            _nats.Add(conn);
        }

        if (watched)
        {
            conn.ConnectionDisconnected += (_, e) => Problem($"{role} connection cut ({e.Message})", conn);
        }

        conn.ServerError += (_, e) => Problem($"{role} got -ERR '{e.Error}'", conn);
        conn.MessageDropped += (_, _) => Problem($"{role}: NATS.Net dropped a message", conn);
        try
        {
            await conn.ConnectAsync();
        }
        catch (Exception ex)
        {
            throw new SetupException($"NATS.Net connect ({role}): {ex.Message}", ex);
        }

        return conn;
    }

    /// <summary>A raw-socket connection for the fast publishers (see <see cref="RawPublisher"/>).</summary>
    public RawConnection ConnectRaw(string role, Transport transport = Transport.Plain, int server = 0)
    {
        var endpoint = Endpoint.Server(server);
        int port = transport == Transport.WebSocket ? endpoint.WsPort : endpoint.Port;
        var conn = RawConnection.Connect(endpoint.Host, port, transport, $"loadbench-{row}-{role}");
        // Its reader only takes PONGs and -ERR; a publisher receives no messages.
        conn.StartReader(IgnoreMessages.Instance);
        lock (_raw)
        {
            _raw.Add((role, conn));
        }

        return conn;
    }

    /// <summary>Cluster rows: waits until server <paramref name="server"/> has <paramref name="subject"/> from
    /// <paramref name="routes"/> routes, so the first publish already finds the remote subscribers.</summary>
    public Task WaitForRouteInterestAsync(int server, string subject, int routes) =>
        routes == 0 ? Task.CompletedTask : ClusterStart.WaitForInterestAsync(Endpoint.Server(server).MonitorPort, subject, routes);

    /// <summary>
    /// Scale rows: closes this run's connections, stops the server cleanly, measures its store on disk,
    /// starts it again on the same store and times the start to the first answer about
    /// <paramref name="stream"/>; the resident set is read 2 s after that answer (as the scale probe does).
    /// Later connections go to the restarted server.
    /// </summary>
    public async Task<RestartFigures> RestartServerAsync(string stream)
    {
        var process = server ?? throw new SetupException("this row needs a single server it can restart");
        await CloseConnectionsAsync();
        await process.StopCleanlyAsync(TimeSpan.FromMinutes(5));
        double diskMb = process.StoreBytes() / 1048576.0;
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        process.StartAgain();
        Endpoint = process.Endpoint;
        var deadline = DateTime.UtcNow.AddMinutes(5);
        while (true)
        {
            if (process.HasExited || DateTime.UtcNow > deadline)
            {
                throw new RowFailedException($"the restarted server never answered stream info: {process.LogTail().Trim()}");
            }

            try
            {
                await using var conn = new NatsConnection(NatsClients.Options(Endpoint, Transport.Plain, $"loadbench-{row}-restart") with { ConnectTimeout = TimeSpan.FromSeconds(2) });
                await conn.ConnectAsync();
                await new NATS.Client.JetStream.NatsJSContext(conn).GetStreamAsync(stream);
                break;
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException or OperationCanceledException or System.Net.Sockets.SocketException)
            {
                // Not listening yet, or JetStream still recovering: the first answer is what is timed.
                await Task.Delay(2);
            }
        }

        double seconds = (System.Diagnostics.Stopwatch.GetTimestamp() - start) / (double)System.Diagnostics.Stopwatch.Frequency;
        await Task.Delay(TimeSpan.FromSeconds(2));
        return new RestartFigures(seconds, diskMb, process.Memory()?.ResidentMb ?? 0);
    }

    private async Task CloseConnectionsAsync()
    {
        lock (_nats)
        {
            lock (_retired)
            {
                _retired.UnionWith(_nats);
            }
        }

        _closing = true;
        await DisposeConnectionsAsync();
        lock (_nats)
        {
            _nats.Clear();
        }

        lock (_raw)
        {
            _raw.Clear();
        }

        _closing = false;
    }

    /// <summary>The first cut or server error seen on any connection of this run, if any.</summary>
    public string? Failure
    {
        get
        {
            if (_problems.TryPeek(out var p))
            {
                return p;
            }

            if (serverProblem?.Invoke() is { } logged)
            {
                return logged;
            }

            lock (_raw)
            {
                foreach (var (role, conn) in _raw)
                {
                    if (conn.Closed && !_closing)
                    {
                        return $"{role} connection cut ({conn.LastError ?? "closed by the server"})";
                    }
                }
            }

            return null;
        }
    }

    public bool Broken => Failure != null;

    public void ThrowIfBroken()
    {
        if (Failure is { } f)
        {
            throw new RowFailedException(f);
        }
    }

    private ValueTask Problem(string what, NatsConnection? from = null)
    {
        bool retired;
        lock (_retired)
        {
            retired = from != null && _retired.Contains(from);
        }

        if (!_closing && !retired)
        {
            _problems.Enqueue(what);
        }

        return ValueTask.CompletedTask;
    }

    public async ValueTask DisposeAsync()
    {
        _closing = true;
        await DisposeConnectionsAsync();
    }

    private async Task DisposeConnectionsAsync()
    {
        foreach (var (_, conn) in _raw)
        {
            conn.Dispose();
        }

        foreach (var conn in _nats)
        {
            try
            {
                await conn.DisposeAsync();
            }
            catch (Exception)
            {
                // A connection the server already closed may fail to dispose cleanly; the run's verdict is already taken.
            }
        }
    }

    /// <summary>What a restart cost: seconds to the first stream info, store size (MiB), resident set after.</summary>
    public readonly record struct RestartFigures(double Seconds, double DiskMb, double RssMb);

    private sealed class IgnoreMessages : IMsgHandler
    {
        public static readonly IgnoreMessages Instance = new();

        public void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
        {
        }

        public void OnBatchEnd()
        {
        }
    }
}
