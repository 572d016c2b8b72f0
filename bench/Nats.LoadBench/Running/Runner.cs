using Nats.LoadBench.Client;
using Nats.LoadBench.Scenarios;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Running;

/// <summary>
/// Runs each row round by round, alternating Go and ours so drift in machine load hits both
/// alike. Every measurement gets a fresh server process; in full mode a short
/// warm-up on that same process precedes it so our JIT-compiled server is measured warm.
/// </summary>
internal sealed class Runner(BenchOptions options, TextWriter log)
{
    private int _runId;
    private string? _oursUnavailable;

    public List<RowResult> Run(IReadOnlyList<Scenario> scenarios)
    {
        var rows = new List<RowResult>();
        foreach (var sc in scenarios)
        {
            log.WriteLine($"== {sc.Name}: {sc.Section} / {sc.Title} / {sc.PayloadSize} B");
            rows.Add(sc.IsLimit ? RunLimit(sc) : RunPair(sc));
        }

        return rows;
    }

    private RowResult RunLimit(Scenario sc)
    {
        var series = new ServerSeries("sink");
        using var sink = new LoopbackSink(sc is ReceiveLimitScenario ? sc.PayloadSize : -1);
        var ep = new Endpoint("127.0.0.1", sink.Port);
        for (int r = 0; r < options.Rounds; r++)
        {
            series.Rounds.Add(Measure(sc, "sink", isOurs: false, () => ep));
        }

        return new RowResult(sc, series, null);
    }

    private RowResult RunPair(Scenario sc)
    {
        var go = new ServerSeries("go");
        var ours = new ServerSeries("ours");
        for (int r = 0; r < options.Rounds; r++)
        {
            // Alternate which server goes first (Go, ours | ours, Go | ...): each server still gets
            // every other slot, and any steady drift in machine load or harness warm-up cancels out.
            if (r % 2 == 0)
            {
                go.Rounds.Add(MeasureOnServer(sc, options.Go));
                MeasureOurs(sc, ours, r);
            }
            else
            {
                MeasureOurs(sc, ours, r);
                go.Rounds.Add(MeasureOnServer(sc, options.Go));
            }
        }

        return new RowResult(sc, go, ours);
    }

    private void MeasureOurs(Scenario sc, ServerSeries ours, int round)
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
            ours.Rounds.Add(MeasureOnServer(sc, options.Ours));
        }
    }

    private RoundResult MeasureOnServer(Scenario sc, ServerSpec spec)
    {
        ServerProcess? server = null;
        try
        {
            return Measure(sc, spec.Label, spec.IsOurs, () =>
            {
                try
                {
                    server = ServerProcess.Start(spec, sc.Features);
                    return server.Endpoint;
                }
                catch (SetupException) when (spec.IsOurs && sc.Features == Features.None)
                {
                    // If the plain server cannot start, no later row can succeed either.
                    _oursUnavailable = "server does not start (see first row)";
                    throw;
                }
            });
        }
        finally
        {
            if (server is { HasExited: true } && spec.IsOurs)
            {
                log.WriteLine($"   {spec.Label} exited during the run: {server.LogTail().Trim()}");
            }

            server?.Dispose();
        }
    }

    private RoundResult Measure(Scenario sc, string label, bool isOurs, Func<Endpoint> start)
    {
        RoundResult result;
        try
        {
            var ep = start();
            if (!options.Smoke)
            {
                sc.Run(ep, new RunSettings(options.Warmup, 0, ++_runId));
            }

            var settings = options.Smoke
                ? new RunSettings(TimeSpan.Zero, sc.SmokeCount, ++_runId)
                : new RunSettings(options.Duration, 0, ++_runId);
            var m = sc.Run(ep, settings);
            result = m.CountsOk
                ? new RoundResult(Outcome.Ok, m, null)
                : new RoundResult(Outcome.Failed, m, $"count mismatch: received {m.Messages}, expected {m.Expected}");
        }
        catch (SetupException ex) when (isOurs)
        {
            result = new RoundResult(Outcome.NotImplemented, null, Short(ex.Message));
        }
        catch (Exception ex)
        {
            result = new RoundResult(Outcome.Failed, null, Short(ex.Message));
        }

        log.WriteLine(result.Outcome switch
        {
            Outcome.Ok => $"   {label,-5} {result.Measurement!.Messages,12:N0} msgs in {result.Measurement.Seconds,6:F2} s = {result.Measurement.MsgPerSec,12:N0} msg/s"
                + (result.Measurement.P50Us is { } p50 ? $"  p50 {p50:F1} us  p99 {result.Measurement.P99Us:F1} us" : ""),
            Outcome.NotImplemented => $"   {label,-5} not implemented ({result.Reason})",
            _ => $"   {label,-5} FAILED: {result.Reason}",
        });
        return result;
    }

    private static string Short(string s)
    {
        s = s.ReplaceLineEndings(" ");
        return s.Length > 300 ? s[..300] + "..." : s;
    }
}
