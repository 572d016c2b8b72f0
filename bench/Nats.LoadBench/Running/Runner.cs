using Nats.LoadBench.Client;
using Nats.LoadBench.Kit;
using Nats.LoadBench.Scenarios;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Running;

/// <summary>
/// Runs each row round by round, alternating Go and ours so drift in machine load hits both
/// alike. Every measurement gets a fresh server process; in full mode a short warm-up on that
/// same process precedes it so our JIT-compiled server is measured warm. A run only yields a
/// figure if every message arrived, no connection was cut and the server logged no slow consumer;
/// otherwise it is a failure, for either server.
/// </summary>
internal sealed class Runner(BenchOptions options, TextWriter log)
{
    private int _runId;
    private string? _oursUnavailable;

    public async Task<List<RowResult>> RunAsync(IReadOnlyList<Scenario> scenarios)
    {
        var rows = new List<RowResult>();
        foreach (var sc in scenarios)
        {
            log.WriteLine($"== {sc.Name}: {sc.Section} / {sc.Title} / {sc.PayloadSize} B");
            rows.Add(sc.IsLimit ? await RunLimitAsync(sc) : await RunPairAsync(sc));
        }

        return rows;
    }

    private async Task<RowResult> RunLimitAsync(Scenario sc)
    {
        var series = new ServerSeries("sink");
        using var sink = new LoopbackSink();
        var ep = new Endpoint("127.0.0.1", sink.Port);
        for (int r = 0; r < options.Rounds; r++)
        {
            series.Rounds.Add(await MeasureAsync(sc, "sink", isOurs: false, ep, server: null));
        }

        return new RowResult(sc, series, null);
    }

    private async Task<RowResult> RunPairAsync(Scenario sc)
    {
        var go = new ServerSeries("go");
        var ours = new ServerSeries("ours");
        for (int r = 0; r < options.Rounds; r++)
        {
            // Alternate which server goes first (Go, ours | ours, Go | ...): each server still gets
            // every other slot, and any steady drift in machine load or harness warm-up cancels out.
            if (r % 2 == 0)
            {
                go.Rounds.Add(await MeasureOnServerAsync(sc, options.Go));
                await MeasureOursAsync(sc, ours, r);
            }
            else
            {
                await MeasureOursAsync(sc, ours, r);
                go.Rounds.Add(await MeasureOnServerAsync(sc, options.Go));
            }
        }

        return new RowResult(sc, go, ours);
    }

    private async Task MeasureOursAsync(Scenario sc, ServerSeries ours, int round)
    {
        if (_oursUnavailable != null)
        {
            ours.Rounds.Add(new RoundResult(Outcome.NotImplemented, null, _oursUnavailable));
            log.WriteLine($"   ours  round {round + 1}: not implemented ({_oursUnavailable})");
        }
        else if (ours.Outcome == Outcome.NotImplemented && ours.Rounds.Count > 0)
        {
            // Missing features do not appear between rounds; skip the remaining attempts.
            ours.Rounds.Add(ours.Rounds[0]);
        }
        else
        {
            ours.Rounds.Add(await MeasureOnServerAsync(sc, options.Ours));
        }
    }

    /// <summary>
    /// Proves the failure detection on both servers: a subscriber that stops reading must be cut by
    /// the server and that run must come out FAILED with the cut as its reason. True if it did for both.
    /// </summary>
    public async Task<bool> SelfCheckAsync()
    {
        var sc = new StuckSubscriberScenario { Name = "self-check-stuck-subscriber", Section = "self-check", Title = "Stuck subscriber is cut and reported", PayloadSize = 128, SmokeCount = 400_000 };
        log.WriteLine($"== {sc.Name}: a NATS.Net subscriber that never reads, max_pending 1 MB; the run must be reported FAILED");
        bool ok = true;
        foreach (var spec in new[] { options.Go, options.Ours })
        {
            var r = await MeasureOnServerAsync(sc, spec);
            bool detected = r.Outcome == Outcome.Failed && r.Reason is { } why
                && (why.Contains("connection cut", StringComparison.Ordinal) || why.Contains("Slow Consumer", StringComparison.OrdinalIgnoreCase));
            log.WriteLine($"   {spec.Label,-5} {(detected ? "ok: the cut was reported as a failure" : $"NOT DETECTED ({r.Outcome}: {r.Reason})")}");
            ok &= detected;
        }

        return ok;
    }

    private async Task<RoundResult> MeasureOnServerAsync(Scenario sc, ServerSpec spec)
    {
        ServerProcess server;
        try
        {
            server = sc.ClusterSize <= 1 ? ServerProcess.Start(spec, sc.Features, sc.ServerConfig, spec.IsOurs ? sc.OursJetStreamConfig : null)
                : sc.Link == ClusterLink.Routes ? ClusterStart.Start(spec, sc.ClusterSize, sc.Features, sc.ServerConfig, spec.IsOurs ? sc.OursJetStreamConfig : null)
                : LinkedPairStart.Start(spec, sc.Link, sc.Features, sc.ServerConfig);
        }
        catch (SetupException ex)
        {
            if (spec.IsOurs && sc.Features == Features.None && sc.ServerConfig == null)
            {
                // If the plain server cannot start, no later row can succeed either.
                _oursUnavailable = "server does not start (see first row)";
            }

            var failed = spec.IsOurs
                ? new RoundResult(Outcome.NotImplemented, null, Short(ex.Message))
                : new RoundResult(Outcome.Failed, null, Short(ex.Message));
            Report(spec.Label, failed);
            return failed;
        }

        using (server)
        {
            var result = await MeasureAsync(sc, spec.Label, spec.IsOurs, server.Endpoint, server);
            if (result.Outcome != Outcome.Ok && server.Peers.Count > 0 && Environment.GetEnvironmentVariable("LOADBENCH_CLUSTER_LOGS") == "1")
            {
                // A cluster row's failure is often an election or a route: every server's log tail says which.
                foreach (var s in server.Peers.Prepend(server))
                {
                    log.WriteLine($"   --- {spec.Label} server log ---\n{s.LogTail().Trim()}");
                }
            }

            if (server.HasExited)
            {
                log.WriteLine($"   {spec.Label} exited during the run: {server.LogTail().Trim()}");
            }

            return result;
        }
    }

    private async Task<RoundResult> MeasureAsync(Scenario sc, string label, bool isOurs, Endpoint ep, ServerProcess? server)
    {
        RoundResult result;
        double? cpu = null;
        double?[]? cpuEach = null;
        try
        {
            if (!options.Smoke && sc.WarmsUp)
            {
                await RunOnceAsync(sc, ep, new RunSettings(options.Warmup, 0, ++_runId), server);
            }

            var settings = options.Smoke
                ? new RunSettings(TimeSpan.Zero, sc.SmokeCount, ++_runId)
                : new RunSettings(options.Duration, 0, ++_runId);
            var cpuBefore = server?.CpuSeconds();
            var eachBefore = server?.CpuSecondsEach();
            var m = await RunOnceAsync(sc, ep, settings, server);
            // A row that restarts its server ends on a new process: its CPU time is the restarted one's.
            cpu = sc.WarmsUp ? server?.CpuSeconds() - cpuBefore : server?.CpuSeconds();
            if (sc.WarmsUp && server is { Peers.Count: > 0 } && eachBefore is not null)
            {
                cpuEach = [.. server.CpuSecondsEach().Zip(eachBefore, (after, before) => after - before)];
            }
            result = m.CountsOk
                ? new RoundResult(Outcome.Ok, m, null)
                : new RoundResult(Outcome.Failed, m, $"messages lost: received {m.Messages:N0} of {m.Expected:N0}");
        }
        catch (SetupException ex) when (isOurs)
        {
            result = new RoundResult(Outcome.NotImplemented, null, Short(ex.Message));
        }
        catch (Exception ex)
        {
            result = new RoundResult(Outcome.Failed, null, Short(ex.Message));
        }

        result = result with { Memory = server?.Memory(), CpuSeconds = cpu, CpuEach = cpuEach };
        Report(label, result);
        return result;
    }

    /// <summary>One run; a cut connection or a logged slow consumer fails it even if the counts add up.</summary>
    private static async Task<Measurement> RunOnceAsync(Scenario sc, Endpoint ep, RunSettings settings, ServerProcess? server)
    {
        await using var run = new RunContext(ep, settings, sc.Name, () => ServerSays(server), server) { KillServer = server is null ? null : server.Kill };
        Measurement m;
        try
        {
            m = await sc.RunAsync(run);
        }
        catch (Exception ex) when (ex is not SetupException)
        {
            // A cut is the cause; the row's own error (a missing reply, a failed flush) is its symptom.
            throw new RowFailedException(WithServerLog(run.Failure is { } cut && !ex.Message.Contains(cut, StringComparison.Ordinal) ? $"{cut}; {ex.Message}" : ex.Message, server), ex);
        }

        if (run.Failure is { } failure)
        {
            throw new RowFailedException(WithServerLog($"{failure}; received {m.Messages:N0} of {m.Expected:N0}", server));
        }

        return m;
    }

    private static string? ServerSays(ServerProcess? server) =>
        server?.SlowConsumerLine is { } line ? $"server logged: {line.Trim()}" : null;

    private static string WithServerLog(string message, ServerProcess? server) =>
        ServerSays(server) is { } said && !message.Contains(said, StringComparison.Ordinal) ? $"{message}; {said}" : message;

    private void Report(string label, RoundResult result)
    {
        string mem = result.Memory is { } mm ? $"  [rss peak {mm.PeakMb:F0} MB, end {mm.ResidentMb:F0} MB]" : "";
        if (result is { CpuSeconds: { } cpu, Measurement.Messages: > 0 })
        {
            mem += $"  [server cpu {cpu:F2} s, {cpu * 1e9 / result.Measurement.Messages:F0} ns/msg"
                + (result.CpuEach is { } each ? $" = {string.Join(" + ", each.Select(c => c is { } v ? $"{v * 1e9 / result.Measurement.Messages:F0}" : "?"))} per server" : "") + "]";
        }
        log.WriteLine(result.Outcome switch
        {
            Outcome.Ok => $"   {label,-5} {result.Measurement!.Messages,12:N0} msgs in {result.Measurement.Seconds,6:F2} s = {result.Measurement.MsgPerSec,12:N0} msg/s"
                + (result.Measurement.P50Us is { } p50 ? $"  p50 {p50:F1} us  p99 {result.Measurement.P99Us:F1} us" : "") + mem,
            Outcome.NotImplemented => $"   {label,-5} not implemented ({result.Reason})",
            _ => $"   {label,-5} FAILED: {result.Reason}{mem}",
        });
    }

    private static string Short(string s)
    {
        s = s.ReplaceLineEndings(" ");
        return s.Length > 400 ? s[..400] + "..." : s;
    }
}
