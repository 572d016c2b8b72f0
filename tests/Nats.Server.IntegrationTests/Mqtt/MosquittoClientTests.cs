using System.Diagnostics;
using System.Text;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>Debian's mosquitto_pub / mosquitto_sub (installed by scripts/test.sh) against Go 2.9.10 and ours.</summary>
public sealed class MosquittoClientTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    public static TheoryData<string, int> ServersAndQos => new() { { "go", 0 }, { "go", 1 }, { "ours", 0 }, { "ours", 1 } };

    [Theory]
    [MemberData(nameof(ServersAndQos))]
    public async Task Mosquitto_pub_reaches_nats_and_nats_reaches_mosquitto_sub(string kind, int qos)
    {
        await using var server = await MqttTestServer.StartAsync(kind);
        await using var nats = new NatsConnection(new NatsOpts { Url = server.NatsUrl });

        // mosquitto_pub -> NATS subscriber
        var inbox = new TaskCompletionSource<NatsMsg<byte[]>>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var sub = await nats.SubscribeCoreAsync<byte[]>("home.>");
        _ = Task.Run(async () =>
        {
            await foreach (var msg in sub.Msgs.ReadAllAsync())
            {
                inbox.TrySetResult(msg);
            }
        });
        await nats.PingAsync();
        var pub = await RunAsync("mosquitto_pub", "-h", "127.0.0.1", "-p", $"{server.MqttPort}", "-V", "mqttv311", "-q", $"{qos}",
            "-i", $"mpub{qos}", "-t", "home/kitchen/light", "-m", "on");
        Assert.Equal(0, pub.ExitCode);
        var message = await inbox.Task.WaitAsync(Wait);
        Assert.Equal(("home.kitchen.light", "on"), (message.Subject, Encoding.UTF8.GetString(message.Data!)));

        // NATS publisher -> mosquitto_sub (exits after one message with -C 1); retained first so the
        // subscriber has a message the moment it subscribes, then a live one from NATS.
        var retain = await RunAsync("mosquitto_pub", "-h", "127.0.0.1", "-p", $"{server.MqttPort}", "-V", "mqttv311", "-q", $"{qos}",
            "-i", $"mret{qos}", "-r", "-t", "state/door", "-m", "closed");
        Assert.Equal(0, retain.ExitCode);
        var subscriber = Start("mosquitto_sub", "-h", "127.0.0.1", "-p", $"{server.MqttPort}", "-V", "mqttv311", "-q", $"{qos}",
            "-i", $"msub{qos}", "-t", "state/#", "-C", "2", "-v");
        var firstLine = await subscriber.StandardOutput.ReadLineAsync().WaitAsync(Wait);
        Assert.Equal("state/door closed", firstLine);
        await nats.PublishAsync("state.window", Encoding.UTF8.GetBytes("open"));
        var secondLine = await subscriber.StandardOutput.ReadLineAsync().WaitAsync(Wait);
        Assert.Equal("state/window open", secondLine);
        await subscriber.WaitForExitAsync().WaitAsync(Wait);
        Assert.Equal(0, subscriber.ExitCode);
    }

    private static Process Start(string file, params string[] args)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        return Process.Start(psi) ?? throw new InvalidOperationException($"{file} did not start (install mosquitto-clients)");
    }

    private static async Task<Process> RunAsync(string file, params string[] args)
    {
        var process = Start(file, args);
        await process.WaitForExitAsync().WaitAsync(Wait);
        return process;
    }
}
