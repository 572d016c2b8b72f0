using System.Globalization;
using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// Jepsen-style fault trials on an R3 file stream on three servers, ours and Go 2.9.10 (issue #26): kill -9 of the
/// leader and of a follower, SIGSTOP of the leader past the election timeout, a partition of the leader, a rolling
/// restart, a power cut of the leader and of every server. Publishers of NATS.Net, nats.go and nats.js (one per
/// server) record every PubAck; a durable consumer drains all along. Ours must keep every acknowledged message
/// exactly once at its sequence on every replica, with the replicas alike (an old leader's uncommitted tail is cut
/// back when it rejoins), and the consumer must deliver every one. Go's run reports its figures and only has to keep
/// each acknowledged message on some replica (it is known to diverge after leader faults), except after a power cut
/// of every server: Go acknowledges before its writes are synced, so there it only reports.
/// One trial per case; NATS_FAULT_TRIALS runs more (scripts/jepsen.sh), NATS_FAULT_RESULTS collects the figures.
/// </summary>
public class ReplicatedStreamFaultTests(ITestOutputHelper output)
{
    public static TheoryData<string, string> Cases()
    {
        var data = new TheoryData<string, string>();
        foreach (var fault in Enum.GetNames<ClusterFault>())
        {
            data.Add("ours", fault);
            data.Add("go", fault);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public Task AcknowledgedMessagesSurviveTheFault(string kind, string fault) => RunTrialsAsync(kind, Enum.Parse<ClusterFault>(fault), 3, Log);

    /// <summary>Runs the trials of one case (NATS_FAULT_TRIALS of them) and fails with every trial that broke its promise.</summary>
    internal static async Task RunTrialsAsync(string kind, ClusterFault fault, int servers, Action<string> log)
    {
        var trials = int.TryParse(Environment.GetEnvironmentVariable("NATS_FAULT_TRIALS"), NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n > 0 ? n : 1;
        var failures = new List<string>();
        for (var trial = 1; trial <= trials; trial++)
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(400));
            var result = await new FaultTrial(kind, fault, trial, log, servers).RunAsync(cts.Token);
            Assert.True(result.Acked > 0, $"{result}: nothing acknowledged");
            var broken = kind == "ours" ? !result.Clean || !result.Converged : fault != ClusterFault.PowerCutAll && result.LostAll > 0;
            if (broken)
            {
                failures.Add(result.ToString());
            }
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    private void Log(string line)
    {
        try
        {
            output.WriteLine($"{DateTime.UtcNow:HH:mm:ss.fff} {line}");
        }
        catch (InvalidOperationException)
        {
            // The test ended (a timed-out run): nobody reads its output any more.
        }
    }
}
