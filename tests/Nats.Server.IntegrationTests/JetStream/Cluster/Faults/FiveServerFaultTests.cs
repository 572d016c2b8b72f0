using Xunit.Abstractions;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// The leader faults of <see cref="ReplicatedStreamFaultTests"/> on five servers with an R5 stream, ours and Go
/// 2.9.10: a quorum is three, so two replicas may lag or be lost without an acknowledged message going missing.
/// A class of its own so that it runs beside the three-server trials.
/// </summary>
public class FiveServerFaultTests(ITestOutputHelper output)
{
    public static TheoryData<string, string> Cases()
    {
        var data = new TheoryData<string, string>();
        foreach (var fault in new[] { ClusterFault.LeaderKill, ClusterFault.LeaderPartition })
        {
            data.Add("ours", fault.ToString());
            data.Add("go", fault.ToString());
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public Task AcknowledgedMessagesSurviveTheFault(string kind, string fault) =>
        ReplicatedStreamFaultTests.RunTrialsAsync(kind, Enum.Parse<ClusterFault>(fault), 5, Log);

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
