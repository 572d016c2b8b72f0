using Nats.LoadBench.Client;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.LoadBench.Kit;

/// <summary>
/// JetStream setup shared by the JetStream rows, through NATS.Net's JetStream context. A server
/// without JetStream (no "jetstream" in INFO, or an API that does not answer) is a missing feature,
/// reported as "not implemented" for ours rather than as a failure.
/// </summary>
internal static class JetStreamKit
{
    public static async Task<NatsJSContext> ContextAsync(RunContext run, string role, int server = 0, bool watched = true)
    {
        var conn = await run.ConnectAsync(role, server: server, watched: watched);
        if (conn.ServerInfo is not { JetStreamAvailable: true })
        {
            throw new SetupException("no jetstream in the server's INFO");
        }

        return new NatsJSContext(conn);
    }

    public static async Task<INatsJSStream> CreateStreamAsync(NatsJSContext js, string name, string subject, StreamConfigStorage storage)
    {
        try
        {
            return await js.CreateStreamAsync(new StreamConfig(name, [subject]) { Storage = storage });
        }
        catch (Exception ex) when (ex is NatsException or TimeoutException)
        {
            throw new SetupException($"stream create: {ex.Message}", ex);
        }
    }

    /// <summary>
    /// A replicated stream on the row's cluster, created through server 0 once the JetStream cluster takes it (the meta
    /// group elects its leader after the routes form; until then creates are refused or unanswered), within 30 s.
    /// Returns the index of the server leading it.
    /// </summary>
    public static async Task<int> CreateReplicatedStreamAsync(NatsJSContext js, StreamConfig config, RunContext run)
    {
        var deadline = Environment.TickCount64 + 30_000;
        while (true)
        {
            try
            {
                // Go 2.9.10 can leave a create sent right after its meta leader's election unanswered: ask again.
                using var attempt = new CancellationTokenSource(TimeSpan.FromSeconds(5));
                var stream = await js.CreateStreamAsync(config, attempt.Token);
                return stream.Info.Cluster?.Leader is { Length: > 0 } leader
                    ? LeaderIndex(leader, run)
                    : await StreamLeaderAsync(js, config.Name!, run, TimeSpan.FromSeconds(30));
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException or OperationCanceledException && Environment.TickCount64 < deadline)
            {
                // Meta group not ready: "JetStream system temporarily unavailable", "insufficient resources", no responders.
                // Setup only, outside the measured time.
                if (Environment.GetEnvironmentVariable("LOADBENCH_CLUSTER_LOGS") == "1")
                {
                    Console.WriteLine($"   create {config.Name}: {ex.GetType().Name}: {ex.Message}");
                }

                await Task.Delay(250);
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException or OperationCanceledException)
            {
                throw new SetupException($"R{config.NumReplicas} stream create: {ex.Message}", ex);
            }
        }
    }

    /// <summary>The index of the server leading <paramref name="stream"/>, asked until one is named (an election in progress names none).</summary>
    public static async Task<int> StreamLeaderAsync(NatsJSContext js, string stream, RunContext run, TimeSpan timeout)
    {
        var deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (true)
        {
            try
            {
                var info = await js.GetStreamAsync(stream);
                if (info.Info.Cluster?.Leader is { Length: > 0 } leader)
                {
                    return LeaderIndex(leader, run);
                }
            }
            catch (Exception ex) when (ex is NatsException or TimeoutException or OperationCanceledException && Environment.TickCount64 < deadline)
            {
            }

            if (Environment.TickCount64 > deadline)
            {
                throw new RowFailedException($"stream {stream} named no leader within {timeout.TotalSeconds:F0} s");
            }

            // Leadership is not announced to clients; this poll waits for an election only.
            await Task.Delay(100);
        }
    }

    /// <summary>The index of a cluster server from its <c>server_name</c> (<c>bench{i}</c>, see <see cref="Servers.ClusterStart"/>).</summary>
    public static int LeaderIndex(string? leader, RunContext run)
    {
        var cluster = run.Endpoint.Cluster ?? throw new RowFailedException("a replicated row needs a cluster");
        if (leader is { Length: > 5 } && leader.StartsWith("bench", StringComparison.Ordinal)
            && int.TryParse(leader.AsSpan(5), System.Globalization.CultureInfo.InvariantCulture, out var index) && index < cluster.Count)
        {
            return index;
        }
        throw new RowFailedException($"no known leader in the cluster info ('{leader}')");
    }

    /// <summary>Messages the stream really holds: a figure only counts if the server stored what it acknowledged.</summary>
    public static async Task<long> StoredAsync(INatsJSStream stream)
    {
        await stream.RefreshAsync();
        return stream.Info.State.Messages;
    }

    /// <summary>Publishes count messages (or for the run's duration) with up to window acks outstanding; returns the acks.</summary>
    public static async Task<long> PublishAsync(NatsJSContext js, string subject, byte[] payload, int window, long count, long deadlineTicks, RunContext run)
    {
        var inFlight = new Queue<ValueTask<PubAckResponse>>(window);
        long acked = 0;
        long sent = 0;
        while ((count > 0 ? sent < count : System.Diagnostics.Stopwatch.GetTimestamp() < deadlineTicks) && !run.Broken)
        {
            if (inFlight.Count == window)
            {
                acked += Ack(await inFlight.Dequeue());
            }

            inFlight.Enqueue(js.PublishAsync(subject, payload));
            sent++;
        }

        while (inFlight.Count > 0)
        {
            acked += Ack(await inFlight.Dequeue());
        }

        return acked;
    }

    private static int Ack(PubAckResponse ack)
    {
        if (!ack.IsSuccess())
        {
            throw new RowFailedException($"publish ack carried an error: {ack.Error?.Description}");
        }

        return 1;
    }
}
