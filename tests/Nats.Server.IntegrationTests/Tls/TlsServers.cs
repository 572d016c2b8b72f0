using Nats.Server.Hosting;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>Our server in process with its log captured, next to the Go reference started from the same settings.</summary>
internal sealed class LoggedServer : ITestServer
{
    private readonly Microsoft.Extensions.Logging.ILoggerFactory _factory;

    private LoggedServer(NatsServer server, LogCapture log, Microsoft.Extensions.Logging.ILoggerFactory factory)
    {
        Server = server;
        Log = log;
        _factory = factory;
    }

    public NatsServer Server { get; }

    public LogCapture Log { get; }

    public string Kind => "ours";

    public int Port => Server.Port;

    public static async Task<LoggedServer> StartAsync(ServerSettings settings)
    {
        var log = new LogCapture();
        var factory = log.CreateFactory();
        var server = new NatsServer(settings.ToServerOptions(), factory);
        await server.StartAsync();
        return new LoggedServer(server, log, factory);
    }

    public async ValueTask DisposeAsync()
    {
        await Server.DisposeAsync();
        _factory.Dispose();
    }
}

/// <summary>Waits for a line in the Go server's log (it arrives on the process's stderr reader).</summary>
internal static class GoLog
{
    public static async Task<string> WaitForAsync(GoServerProcess go, string text)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var line = go.Log.Split('\n').FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal));
            if (line is not null)
            {
                return line;
            }
            if (cts.IsCancellationRequested)
            {
                throw new TimeoutException($"Go never logged '{text}'; log:\n{go.Log}");
            }
            // The Go process reports through an asynchronous reader we cannot await; poll it.
            await Task.Delay(20);
        }
    }

    /// <summary>"[ERR] 127.0.0.1:1234 - cid:5 - TLS handshake error: x" → "[ERR] TLS handshake error: x" (ports and ids differ).</summary>
    public static string WithoutClient(string line)
    {
        var level = System.Text.RegularExpressions.Regex.Match(line, @"\[(ERR|WRN|INF|DBG|TRC)\]");
        var text = line[level.Index..];
        var cid = text.IndexOf(" - cid:", StringComparison.Ordinal);
        if (cid < 0)
        {
            return text;
        }
        var after = text.IndexOf(" - ", cid + 3, StringComparison.Ordinal);
        return System.Text.RegularExpressions.Regex.Replace(text[..5] + " " + text[(after + 3)..], @":\d+", ":N");
    }
}

/// <summary>The TLS differential tests' setup: one configuration, Go's server and ours started from it.</summary>
internal static class TlsServerPair
{
    /// <summary>A server with <paramref name="pki"/>'s TLS block (plus <paramref name="extraTls"/> inside it) and more top-level lines.</summary>
    public static ServerSettings Settings(TestPki pki, string extraTls = "", params string[] more)
    {
        var settings = new ServerSettings();
        settings.RawConfig.Add(pki.ServerTlsBlock(extraTls));
        settings.RawConfig.AddRange(more);
        return settings;
    }

    /// <summary>Both servers from <paramref name="settings"/>, started together; neither is left running when one fails.</summary>
    public static async Task<(GoServerProcess Go, LoggedServer Ours)> StartBothAsync(ServerSettings settings)
    {
        var go = GoServerProcess.StartAsync(settings);
        var ours = LoggedServer.StartAsync(settings);
        try
        {
            await Task.WhenAll(go, ours);
        }
        catch
        {
            if (go.IsCompletedSuccessfully)
            {
                await go.Result.DisposeAsync();
            }
            if (ours.IsCompletedSuccessfully)
            {
                await ours.Result.DisposeAsync();
            }
            throw;
        }
        return (await go, await ours);
    }
}
