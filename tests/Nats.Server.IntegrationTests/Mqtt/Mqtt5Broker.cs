using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Mqtt;

/// <summary>
/// An MQTT 5 broker for a test: ours (with JetStream and a NATS port) or Debian's mosquitto, the reference
/// where the MQTT 5 specification leaves behaviour open (started on a free port with a generated config).
/// </summary>
internal sealed class Mqtt5Broker : IAsyncDisposable
{
    private readonly MqttTestServer? _ours;
    private readonly Process? _mosquitto;
    private readonly string? _dir;

    private Mqtt5Broker(MqttTestServer? ours, Process? mosquitto, string? dir, int port)
    {
        _ours = ours;
        _mosquitto = mosquitto;
        _dir = dir;
        Port = port;
    }

    public int Port { get; }

    public bool IsOurs => _ours is not null;

    /// <summary>Ours only.</summary>
    public string NatsUrl => _ours!.NatsUrl;

    /// <summary>Ours only: until the server has closed (and detached the sessions of) all but <paramref name="count"/> MQTT connections.</summary>
    public async Task WaitForMqttConnectionsAsync(int count)
    {
        var mqtt = ((InProcessServer)_ours!.Inner).Server.Mqtt!;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        while (mqtt.ConnectionCount != count)
        {
            await Task.Delay(20, timeout.Token);
        }
    }

    public static async Task<Mqtt5Broker> StartAsync(string kind, string extraMqtt = "", params string[] extraConfig)
    {
        if (kind == "ours")
        {
            var ours = await MqttTestServer.StartAsync("ours", extraMqtt, null, extraConfig);
            return new Mqtt5Broker(ours, null, null, ours.MqttPort);
        }
        for (var attempt = 0; ; attempt++)
        {
            var dir = Directory.CreateTempSubdirectory("mosquitto-").FullName;
            var port = FreePort();
            var config = Path.Combine(dir, "mosquitto.conf");
            // Our "max_keep_alive: N" is mosquitto's max_keepalive.
            var keepAlive = System.Text.RegularExpressions.Regex.Match(extraMqtt, @"max_keep_alive:\s*(\d+)");
            await File.WriteAllTextAsync(config, $"listener {port} 127.0.0.1\nallow_anonymous true\nlog_dest stderr\nlog_type all\npersistence false\n"
                + (keepAlive.Success ? $"max_keepalive {keepAlive.Groups[1].Value}\n" : ""));
            var process = new Process
            {
                StartInfo = new ProcessStartInfo("mosquitto", ["-c", config]) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false },
            };
            var ready = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            var log = new StringBuilder();
            process.ErrorDataReceived += (_, e) =>
            {
                if (e.Data is null)
                {
                    ready.TrySetResult(false);
                    return;
                }
                lock (log)
                {
                    log.AppendLine(e.Data);
                }
                if (e.Data.Contains("running", StringComparison.Ordinal))
                {
                    ready.TrySetResult(true);
                }
            };
            process.Start();
            process.BeginErrorReadLine();
            process.BeginOutputReadLine();
            if (await ready.Task.WaitAsync(TimeSpan.FromSeconds(30)))
            {
                return new Mqtt5Broker(null, process, dir, port);
            }
            await process.WaitForExitAsync();
            process.Dispose();
            Directory.Delete(dir, true);
            if (attempt == 2)
            {
                throw new InvalidOperationException("mosquitto did not start:\n" + log);
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_ours is not null)
        {
            await _ours.DisposeAsync();
        }
        if (_mosquitto is not null)
        {
            _mosquitto.Kill();
            await _mosquitto.WaitForExitAsync();
            _mosquitto.Dispose();
            Directory.Delete(_dir!, true);
        }
    }

    private static int FreePort() => Infrastructure.FreePorts.Next();
}
