using System.Diagnostics;
using System.Net.Http;
using System.Text.Json;
using Nats.Server.Configuration;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>/varz mqtt{} and the mqtt block's start-up errors, against what Go 2.9.10 prints.</summary>
public sealed class MqttMonitoringAndConfigTests
{
    [Fact]
    public async Task Varz_mqtt_shows_host_port_and_tls_timeout_like_go()
    {
        var settings = new ServerSettings { JetStream = true };
        settings.RawConfig.Add("server_name: varz_mqtt");
        settings.RawConfig.Add("http_port: -1");
        settings.RawConfig.Add("mqtt { host: 127.0.0.1, port: -1, max_ack_pending: 100, ack_wait: \"5s\" }");
        await using var ours = await InProcessServer.StartAsync(settings);
        using var http = new HttpClient();
        var json = await http.GetStringAsync($"http://127.0.0.1:{ours.Server.MonitoringPort}/varz");
        var mqtt = JsonDocument.Parse(json).RootElement.GetProperty("mqtt").GetRawText();
        Assert.Equal($"{{\"host\":\"127.0.0.1\",\"port\":{ours.Server.MqttPort},\"tls_timeout\":2,\"ack_wait\":5000000000,\"max_ack_pending\":100}}",
            mqtt.Replace(" ", "").Replace("\n", ""));
    }

    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task Connz_lists_mqtt_connections_with_their_client_id(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind, "", null, "http: \"127.0.0.1:-1\"");
        var monitorPort = server.Inner switch
        {
            GoServerProcess go => int.Parse(System.Text.RegularExpressions.Regex.Match(go.Log, @"Starting http monitor on [^:]+:(\d+)").Groups[1].Value,
                System.Globalization.CultureInfo.InvariantCulture),
            InProcessServer ours => ours.Server.MonitoringPort,
            _ => throw new InvalidOperationException(),
        };
        await using var mqtt = await MqttRawClient.ConnectAsync(server.MqttPort);
        await mqtt.SendAsync(MqttRawClient.Connect("connz-client"));
        await mqtt.ReadAsync(4);
        await mqtt.SendAsync(MqttRawClient.Subscribe(1, "a/b", 0));
        await mqtt.ReadAsync(5);
        using var http = new HttpClient();
        var json = await http.GetStringAsync($"http://127.0.0.1:{monitorPort}/connz");
        var connection = JsonDocument.Parse(json).RootElement.GetProperty("connections").EnumerateArray()
            .Single(c => c.TryGetProperty("mqtt_client", out _));
        Assert.Equal("connz-client", connection.GetProperty("mqtt_client").GetString());
        Assert.Equal("mqtt", connection.GetProperty("type").GetString());
        Assert.Equal("Client", connection.GetProperty("kind").GetString());
        Assert.Equal(1, connection.GetProperty("subscriptions").GetInt32());
        Assert.Equal("0s", connection.GetProperty("rtt").GetString());
    }

    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task Connz_keeps_a_closed_mqtt_connection_in_the_closed_ring(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind, "", null, "http: \"127.0.0.1:-1\"");
        var monitorPort = server.Inner switch
        {
            GoServerProcess go => int.Parse(System.Text.RegularExpressions.Regex.Match(go.Log, @"Starting http monitor on [^:]+:(\d+)").Groups[1].Value,
                System.Globalization.CultureInfo.InvariantCulture),
            InProcessServer ours => ours.Server.MonitoringPort,
            _ => throw new InvalidOperationException(),
        };
        await using (var mqtt = await MqttRawClient.ConnectAsync(server.MqttPort))
        {
            await mqtt.SendAsync(MqttRawClient.Connect("closed-client"));
            await mqtt.ReadAsync(4);
            await mqtt.SendAsync(0xE0, 0);
            Assert.True(await mqtt.WaitClosedAsync());
        }
        using var http = new HttpClient();
        var deadline = DateTime.UtcNow.AddSeconds(20);
        JsonElement? found = null;
        while (found is null && DateTime.UtcNow < deadline)
        {
            var json = await http.GetStringAsync($"http://127.0.0.1:{monitorPort}/connz?state=closed");
            found = JsonDocument.Parse(json).RootElement.GetProperty("connections").EnumerateArray()
                .Where(c => c.TryGetProperty("mqtt_client", out _)).Select(c => (JsonElement?)c).FirstOrDefault();
            if (found is null)
            {
                // The ring is written when the connection's task ends, just after the socket closes.
                await Task.Delay(50);
            }
        }
        Assert.NotNull(found);
        var connection = found.Value;
        Assert.Equal("closed-client", connection.GetProperty("mqtt_client").GetString());
        Assert.Equal("mqtt", connection.GetProperty("type").GetString());
        Assert.Equal("Client Closed", connection.GetProperty("reason").GetString());
    }

    [Theory]
    [InlineData("go")]
    [InlineData("ours")]
    public async Task Max_connections_counts_mqtt_and_nats_clients_together(string kind)
    {
        await using var server = await MqttTestServer.StartAsync(kind, "", null, "max_connections: 1");
        await using var first = await MqttRawClient.ConnectAsync(server.MqttPort);
        await first.SendAsync(MqttRawClient.Connect("max-conn-first"));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, await first.ReadAsync(4));

        await using (var second = await MqttRawClient.ConnectAsync(server.MqttPort))
        {
            await second.SendAsync(MqttRawClient.Connect("max-conn-second"));
            Assert.True(await second.WaitClosedAsync());
        }

        var uri = new Uri(server.NatsUrl);
        using var nats = new System.Net.Sockets.TcpClient();
        await nats.ConnectAsync("127.0.0.1", uri.Port);
        using var reader = new StreamReader(nats.GetStream());
        var text = await reader.ReadToEndAsync().WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Contains("-ERR 'maximum connections exceeded'", text, StringComparison.Ordinal);
    }

    public static TheoryData<string> Configs => new()
    {
        "mqtt { port: 1883 }",
        "server_name: a\nmqtt { port: 1883 }",
        "server_name: a\njetstream: enabled\nmqtt { port: 1883, ack_wait: \"-1s\" }",
        "server_name: a\njetstream: enabled\nauthorization { users: [ {user: u, password: p} ] }\nmqtt { port: 1883, authorization { username: x, password: y } }",
        "server_name: a\njetstream: enabled\nmqtt { port: 1883, no_auth_user: nobody }",
        "server_name: a\njetstream: enabled\nmqtt { port: 1883, stream_replicas: 1, consumer_replicas: 3 }",
    };

    [Theory]
    [MemberData(nameof(Configs))]
    public async Task Invalid_mqtt_setups_fail_to_start_with_gos_text(string config)
    {
        var dir = Directory.CreateTempSubdirectory("mqtt-conf-").FullName;
        try
        {
            var path = Path.Combine(dir, "server.conf");
            await File.WriteAllTextAsync(path, config.Replace("jetstream: enabled", $"jetstream {{ store_dir: \"{dir}/js\" }}"));
            var psi = new ProcessStartInfo(GoServerProcess.BinaryPath) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
            psi.ArgumentList.Add("-c");
            psi.ArgumentList.Add(path);
            using var go = Process.Start(psi)!;
            var goError = (await go.StandardError.ReadToEndAsync()).Trim();
            await go.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.NotEqual(0, go.ExitCode);

            var options = new ServerOptions();
            var bound = ConfigBinder.Bind(options, ConfigParser.Parse(await File.ReadAllTextAsync(path), path));
            Assert.Empty(bound.Errors);
            Assert.Equal(goError, "nats-server: " + ServerOptionsValidation.Validate(options));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
