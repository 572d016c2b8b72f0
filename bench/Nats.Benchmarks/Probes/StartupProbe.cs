using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using Nats.Server.Embedding;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// Startup-to-ready of the embedded server in-process: time from creating a NatsServerHost to its Ready
/// event, then to a client's first PONG, over N start/stop cycles (the first one pays JIT and type loading).
/// With "monitoring" the Kestrel monitor starts too.
/// </summary>
internal static class StartupProbe
{
    public static async Task<int> RunAsync(int cycles, bool monitoring)
    {
        var ready = new List<double>();
        var pong = new List<double>();
        for (var i = 0; i < cycles; i++)
        {
            var clock = Stopwatch.StartNew();
            var readyAt = TimeSpan.Zero;
            var host = new NatsServerHost(new NatsServerHostOptions { EnableMonitoring = monitoring });
            host.Ready += (_, _) => readyAt = clock.Elapsed;
            await host.StartAsync();
            using (var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
            {
                await socket.ConnectAsync("127.0.0.1", host.Port);
                await socket.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n"u8.ToArray());
                var buffer = new byte[4096];
                var seen = new StringBuilder();
                while (!seen.ToString().Contains("PONG\r\n", StringComparison.Ordinal))
                {
                    var read = await socket.ReceiveAsync(buffer);
                    if (read == 0)
                    {
                        throw new IOException("server closed the probe connection");
                    }
                    seen.Append(Encoding.ASCII.GetString(buffer, 0, read));
                }
            }
            pong.Add(clock.Elapsed.TotalMilliseconds);
            ready.Add(readyAt.TotalMilliseconds);
            await host.DisposeAsync();
        }

        Console.WriteLine($"embedded server startup ({(monitoring ? "with" : "without")} monitoring), {cycles} cycles");
        Console.WriteLine($"  first:           ready {ready[0],8:F2} ms   first PONG {pong[0],8:F2} ms");
        if (cycles > 1)
        {
            Report("after the first", ready.Skip(1).ToList(), pong.Skip(1).ToList());
        }
        return 0;
    }

    private static void Report(string label, List<double> ready, List<double> pong)
    {
        ready.Sort();
        pong.Sort();
        double P(List<double> v, double q) => v[Math.Min(v.Count - 1, (int)Math.Ceiling(q * v.Count) - 1)];
        Console.WriteLine($"  {label}: ready median {P(ready, 0.5):F2} ms, p95 {P(ready, 0.95):F2} ms, max {ready[^1]:F2} ms; first PONG median {P(pong, 0.5):F2} ms, p95 {P(pong, 0.95):F2} ms");
    }
}
