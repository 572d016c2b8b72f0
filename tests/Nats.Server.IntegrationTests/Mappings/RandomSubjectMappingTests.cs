using System.Text;
using System.Text.RegularExpressions;
using Nats.Server.IntegrationTests.Core;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Mappings;

/// <summary>
/// Every transform function, fed many pseudo-random subjects (fixed seed: the same subjects every run)
/// on the Go server and on ours: the subjects delivered to a "&gt;" subscriber must be identical, in order.
/// Tokens mix delimiters and lengths around the split/slice sizes to reach the functions' corner cases.
/// </summary>
public sealed partial class RandomSubjectMappingTests
{
    private static readonly string[] Mappings =
    [
        "map.s.*=s.{{split(1,-)}}",
        "map.ab.*=ab.{{split(1,ab)}}",
        "map.sl.*.*=sl.{{splitFromLeft(1,3)}}.{{SplitFromRight(2,2)}}",
        "map.cl.*.*=cl.{{sliceFromLeft(1,2)}}.{{sliceFromRight(2,3)}}",
        "map.p.*.*=p.{{partition(7,1,2)}}.{{partition(3,2)}}.$2.$1",
        "map.f.*.>=f.$1.>",
        "map.w.*.*.*=w.$3.{{wildcard(1)}}.$2",
        "map.lit=literal.dest",
    ];

    private static readonly string[] Prefixes = ["s", "ab", "sl", "cl", "p", "f", "w", "lit", "none"];

    [Fact]
    public async Task DeliveredSubjectsMatchGo()
    {
        var subjects = Subjects(new Random(20261122), 600);
        var (go, ours) = await TestServers.StartPairAsync(ServerSettings.Parse(Mappings));
        await using (go)
        await using (ours)
        {
            var fromGo = await Deliveries(go, subjects);
            var fromOurs = await Deliveries(ours, subjects);
            Assert.True(fromGo.Count > 400, $"only {fromGo.Count} deliveries from Go");
            Assert.Equal(fromGo, fromOurs);
        }
    }

    private static List<string> Subjects(Random random, int count)
    {
        const string alphabet = "ab-x1";
        string Token(int maxLength)
        {
            var length = random.Next(1, maxLength + 1);
            var sb = new StringBuilder(length);
            for (var i = 0; i < length; i++)
            {
                sb.Append(alphabet[random.Next(alphabet.Length)]);
            }
            return sb.ToString();
        }
        var result = new List<string>(count);
        for (var i = 0; i < count; i++)
        {
            var prefix = Prefixes[random.Next(Prefixes.Length)];
            var tokens = prefix == "lit" ? 0 : random.Next(1, 5);
            var subject = new StringBuilder(prefix);
            for (var t = 0; t < tokens; t++)
            {
                subject.Append('.').Append(Token(9));
            }
            result.Add(subject.ToString());
        }
        return result;
    }

    /// <summary>Publishes every subject (payload: its index) and returns "subject|payload" per MSG received.</summary>
    private static async Task<List<string>> Deliveries(ITestServer server, List<string> subjects)
    {
        await using var subscriber = await RawClient.ConnectAsync(server.Port);
        await subscriber.ConnectAndReadInfoAsync();
        await subscriber.SendAsync("SUB > 1\r\n");
        await subscriber.SyncAsync();
        await using var publisher = await RawClient.ConnectAsync(server.Port);
        await publisher.ConnectAndReadInfoAsync();
        var batch = new StringBuilder();
        for (var i = 0; i < subjects.Count; i++)
        {
            var payload = i.ToString(System.Globalization.CultureInfo.InvariantCulture);
            batch.Append($"PUB {subjects[i]} {payload.Length}\r\n{payload}\r\n");
        }
        await publisher.SendAsync(batch.ToString());
        await publisher.SyncAsync();
        var text = await subscriber.SyncAsync();
        return MsgLine().Matches(text).Select(m => $"{m.Groups[1].Value}|{m.Groups[2].Value}").ToList();
    }

    [GeneratedRegex(@"MSG (\S+) 1 \d+\r\n([^\r]*)\r\n")]
    private static partial Regex MsgLine();
}
