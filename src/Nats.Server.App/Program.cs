using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Logging;

// Messages about configuration use the Go server's "nats-server:" prefix so scripts that check
// "nats-server -t" output keep working against this executable.
const string GoExe = "nats-server";

SocketEngineSettings.ApplyBeforeFirstSocket();

CommandLineOptions cli;
try
{
    cli = CommandLineOptions.Parse(args);
}
catch (CommandLineException e)
{
    if (e.Message.StartsWith("unrecognized command", StringComparison.Ordinal))
    {
        Console.Error.WriteLine($"{GoExe}: {e.Message}");
    }
    else
    {
        Console.Error.WriteLine(e.Message);
        Console.Error.WriteLine(UsageText.Text);
    }
    return 1;
}

if (cli.ShowVersion)
{
    Console.WriteLine($"nats-net-server: v{ServerVersion.BuildVersion}");
    return 0;
}
if (cli.ShowHelp)
{
    Console.WriteLine(UsageText.Text);
    return 0;
}

ServerOptions options;
try
{
    options = cli.BuildServerOptions(out var warnings);
    if (cli.CheckConfig)
    {
        Console.Error.WriteLine($"{GoExe}: configuration file {cli.ConfigFile} is valid");
        return 0;
    }
    foreach (var warning in warnings)
    {
        Console.Error.WriteLine(warning);
    }
    if (ServerOptionsValidation.Validate(options) is { } invalid)
    {
        Console.Error.WriteLine($"{GoExe}: {invalid}");
        return 1;
    }
}
catch (ConfigurationException e)
{
    Console.Error.WriteLine($"{GoExe}: {e.Message}");
    return 1;
}

TextWriter logWriter;
try
{
    logWriter = options.LogFile is { Length: > 0 } path
        ? new RotatingFileWriter(path, options.LogSizeLimit)
        : Console.Error;
}
catch (Exception e) when (e is IOException or UnauthorizedAccessException)
{
    Console.Error.WriteLine($"{GoExe}: error opening file: {e.Message}");
    return 1;
}

var provider = new GoStyleLoggerProvider(
    logWriter,
    GoStyleLoggerProvider.LevelFor(options.Debug, options.Trace),
    options.Logtime,
    options.LogtimeUtc,
    ownsWriter: !ReferenceEquals(logWriter, Console.Error));
using var loggerFactory = LoggerFactory.Create(b => b.SetMinimumLevel(LogLevel.Trace).AddProvider(provider));
var log = loggerFactory.CreateLogger("nats-net-server");

foreach (var (key, value) in options.UnsupportedConfig)
{
    log.LogWarning("Configuration \"{Key}\" ({Source}) is not supported yet and is ignored", key, value.Source);
}

var stopRequested = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
void OnStopSignal(PosixSignalContext context)
{
    // Keep the runtime from terminating the process so shutdown can close clients cleanly.
    context.Cancel = true;
    stopRequested.TrySetResult();
}
using var sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnStopSignal);
using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnStopSignal);
// SIGUSR1 reopens the log file (after logrotate moved it), as with the Go server. .NET has no enum
// member for it, so the raw Linux number is used; other platforms simply do not get the handler.
using var sigusr1 = logWriter is RotatingFileWriter rotating && OperatingSystem.IsLinux()
    ? PosixSignalRegistration.Create((PosixSignal)10, context =>
    {
        context.Cancel = true;
        rotating.Reopen();
        log.LogInformation("Reopened log file");
    })
    : null;

var server = new NatsServer(options, loggerFactory);
try
{
    await server.StartAsync();
}
catch (Exception e)
{
    log.LogCritical("Failed to start: {Error}", e.Message);
    return 1;
}

if (options.PidFile is { Length: > 0 } pidFile)
{
    try
    {
        await File.WriteAllTextAsync(pidFile, Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }
    catch (Exception e) when (e is IOException or UnauthorizedAccessException)
    {
        log.LogCritical("Could not write pidfile: {Error}", e.Message);
        await server.ShutdownAsync();
        return 1;
    }
}

string? portsFile = null;
if (options.PortsFileDir is { Length: > 0 } portsDir)
{
    try
    {
        string exe = Path.GetFileName(Environment.GetCommandLineArgs()[0]);
        portsFile = PortsFile.Write(portsDir, Path.GetFileNameWithoutExtension(exe), Environment.ProcessId,
            options.Host, server.Port, options.HttpHost, options.HttpPort);
    }
    catch (Exception e) when (e is IOException or UnauthorizedAccessException)
    {
        log.LogError("Error writing ports file ({Dir}): {Error}", portsDir, e.Message);
    }
}

await stopRequested.Task;
log.LogInformation("Trapped signal; shutting down");
await server.ShutdownAsync();
if (portsFile is not null)
{
    try
    {
        File.Delete(portsFile);
    }
    catch (Exception e) when (e is IOException or UnauthorizedAccessException)
    {
        log.LogError("Error cleaning up ports file {File}: {Error}", portsFile, e.Message);
    }
}
return 0;
