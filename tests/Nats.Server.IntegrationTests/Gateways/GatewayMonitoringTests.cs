using System.Text.Json;
using System.Text.Json.Nodes;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Gateways;

/// <summary>
/// /gatewayz (plain, <c>accs=1</c>, <c>gw_name</c>) and the /varz gateway block of a Go pair and of our pair, the same
/// topology with the same subscriptions, compared after ids, times, ports and the system account's own internal
/// subscriptions (which differ by implementation) are normalised away.
/// </summary>
public sealed class GatewayMonitoringTests
{
    [Fact]
    public async Task GatewayzAndVarzMatchGo()
    {
        var documents = new Dictionary<string, List<string>>();
        foreach (var kind in new[] { "go", "ours" })
        {
            await using var topology = await GatewayTopology.StartAsync([kind], [kind]);
            await using var onA = new NatsConnection(new NatsOpts { Url = topology.A[0].Url });
            await using var onB = new NatsConnection(new NatsOpts { Url = topology.B[0].Url });
            await using var plain = await onB.SubscribeCoreAsync<string>("mon.plain");
            await using var queue = await onB.SubscribeCoreAsync<string>("mon.queue", queueGroup: "q");
            await ClusterProbe.UntilReceivedAsync(onA, "mon.plain", plain);
            await ClusterProbe.UntilReceivedAsync(onA, "mon.queue", queue);
            var list = new List<string>();
            foreach (var query in new[] { "", "?accs=1", "?accs=1&gw_name=GB", "?gw_name=nope" })
            {
                using var gatewayz = await topology.A[0].GetJsonAsync("/gatewayz" + query);
                list.Add(query + " " + Normalise(JsonNode.Parse(gatewayz.RootElement.GetRawText())!));
            }
            using var varz = await topology.A[0].GetJsonAsync("/varz");
            var block = JsonNode.Parse(varz.RootElement.GetProperty("gateway").GetRawText())!;
            block["port"] = 0;
            foreach (var remote in block["gateways"]!.AsArray())
            {
                remote!["urls"] = remote["urls"]!.AsArray().Count;
            }
            list.Add("varz " + block.ToJsonString());
            documents[kind] = list;
        }
        for (var i = 0; i < documents["go"].Count; i++)
        {
            Assert.Equal(documents["go"][i], documents["ours"][i]);
        }
    }

    private static string Normalise(JsonNode root)
    {
        root["server_id"] = "ID";
        root["now"] = "NOW";
        if (root["port"] is not null)
        {
            root["port"] = 0;
        }
        foreach (var direction in new[] { "outbound_gateways", "inbound_gateways" })
        {
            if (root[direction] is not JsonObject map)
            {
                continue;
            }
            foreach (var (_, value) in map)
            {
                foreach (var remote in value is JsonArray array ? array.Select(r => r!) : [value!])
                {
                    if (remote["connection"] is JsonObject connection)
                    {
                        foreach (var field in new[] { "cid", "ip", "port", "start", "last_activity", "rtt", "uptime", "idle", "name", "in_msgs", "out_msgs",
                                     "in_bytes", "out_bytes", "pending_bytes", "subscriptions" })
                        {
                            if (connection.ContainsKey(field))
                            {
                                connection[field] = "X";
                            }
                        }
                    }
                    if (remote["accounts"] is JsonArray accounts)
                    {
                        var sorted = accounts.Select(a => a!.DeepClone()).OrderBy(a => (string?)a["name"], StringComparer.Ordinal).ToList();
                        foreach (var account in sorted.Where(a => (string?)a["name"] == "$SYS"))
                        {
                            account.AsObject().Remove("num_subs");
                        }
                        remote["accounts"] = new JsonArray([.. sorted]);
                    }
                }
            }
        }
        return root.ToJsonString(new JsonSerializerOptions { WriteIndented = false });
    }
}
