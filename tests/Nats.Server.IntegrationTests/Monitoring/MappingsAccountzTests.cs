using System.Text.Json;
using Nats.Server.Configuration;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>
/// /accountz?acc=$G lists the mappings as Go does: sources as keys, destinations sorted by weight with
/// cumulative weights, the implicit remainder-to-source entry included. Both servers read the same file.
/// </summary>
public sealed class MappingsAccountzTests
{
    // No ties between weights: Go sorts destinations with an unstable sort.
    private const string Config = """
        mappings {
          foo: bar
          "a.*.*": "b.$2.$1"
          "w.>": [{destination: "y.>", weight: "60%"}, {destination: "x.>", weight: 40%}]
          "p.*": [{destination: "q.$1", weight: 30}]
          "z.>": [{destination: "z.>", weight: 30}, {destination: "zz.>", weight: 20}]
          "c": [{destination: "d", weight: 70}, {destination: "e", weight: 10, cluster: "east"}]
        }
        """;

    [Fact]
    public async Task AccountDetailListsMappingsLikeGo()
    {
        var dir = Path.Combine(Path.GetTempPath(), "nats-map-accountz-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        try
        {
            var file = Path.Combine(dir, "mappings.conf");
            await File.WriteAllTextAsync(file, Config);
            await using var go = await GoMonitoredServer.StartAsync(file);
            await using var ours = await OurMonitoredServer.StartAsync(options =>
            {
                var result = ConfigBinder.Bind(options, ConfigParser.Parse(Config, file));
                Assert.Empty(result.Errors);
            });

            var goDetail = (await go.GetJsonAsync("/accountz?acc=$G")).GetProperty("account_detail");
            var ourDetail = (await ours.GetJsonAsync("/accountz?acc=$G")).GetProperty("account_detail");
            var goMappings = goDetail.GetProperty("mappings");
            var ourMappings = ourDetail.GetProperty("mappings");
            Assert.Equal(Canonical(goMappings), Canonical(ourMappings));
            Assert.Equal(100, ourMappings.GetProperty("w.>")[1].GetProperty("weight").GetInt32());

            // The field comes right after "subscriptions", as in Go's AccountInfo.
            var names = ourDetail.EnumerateObject().Select(p => p.Name).ToList();
            Assert.Equal(names.IndexOf("subscriptions") + 1, names.IndexOf("mappings"));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task NoMappingsNoField()
    {
        await using var ours = await OurMonitoredServer.StartAsync();
        var detail = (await ours.GetJsonAsync("/accountz?acc=$G")).GetProperty("account_detail");
        Assert.False(detail.TryGetProperty("mappings", out _));
    }

    private static string Canonical(JsonElement element) => JsonSerializer.Serialize(element);
}
