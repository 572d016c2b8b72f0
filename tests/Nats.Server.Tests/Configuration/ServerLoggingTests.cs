using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Logging;

namespace Nats.Server.Tests.Configuration;

/// <summary>Logging reconfigured by a reload: destination, level and timestamps switch in one step.</summary>
public class ServerLoggingTests
{
    [Fact]
    public void Apply_moves_logging_to_a_file_and_back_with_new_level_and_format()
    {
        using var dir = new TempDirectory();
        var console = new StringWriter();
        using var logging = ServerLogging.Create(new ServerOptions { Logtime = false }, console);
        var logger = logging.Provider.CreateLogger("t");
        logger.LogInformation("one");
        logger.LogDebug("hidden");

        var file = System.IO.Path.Combine(dir.Path, "server.log");
        logging.Apply(new ServerOptions { Logtime = false, Debug = true, LogFile = file });
        logger.LogDebug("two");
        Assert.NotNull(logging.File);

        logging.Apply(new ServerOptions { Logtime = false });
        logger.LogDebug("hidden again");
        logger.LogInformation("three");

        var consoleLines = console.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal([$"[{Environment.ProcessId}] [INF] one", $"[{Environment.ProcessId}] [INF] three"], consoleLines);
        Assert.Equal($"[{Environment.ProcessId}] [DBG] two", File.ReadAllText(file).Trim());
        Assert.Null(logging.File);
    }

    [Fact]
    public void Apply_keeps_the_open_file_when_only_the_level_changes()
    {
        using var dir = new TempDirectory();
        var file = System.IO.Path.Combine(dir.Path, "server.log");
        using var logging = ServerLogging.Create(new ServerOptions { LogFile = file }, new StringWriter());
        var before = logging.File;
        logging.Apply(new ServerOptions { LogFile = file, Trace = true });
        Assert.Same(before, logging.File);
        Assert.Equal(LogLevel.Trace, logging.Provider.MinimumLevel);
    }
}
