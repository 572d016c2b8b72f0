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
    // Byte for byte what Go's binary prints: tools and client test suites parse it to gate features.
    // Our own build version is in the startup log ("Version: ... (nats-net-server <build>)").
    Console.Out.Write($"{GoExe}: v{ServerVersion.ProtocolVersion}\n");
    return 0;
}
if (cli.ShowHelp)
{
    Console.WriteLine(UsageText.Text);
    return 0;
}
if (cli.Signal is { } signal)
{
    // Like Go, -sl acts before the configuration is read and ends the process.
    if (SignalCommand.Send(signal) is { } signalError)
    {
        Console.Error.WriteLine($"{GoExe}: {signalError}");
        return 1;
    }
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

ServerLogging logging;
try
{
    logging = ServerLogging.Create(options, Console.Error);
}
catch (Exception e) when (e is IOException or UnauthorizedAccessException)
{
    Console.Error.WriteLine($"{GoExe}: error opening file: {e.Message}");
    return 1;
}

// Not Microsoft.Extensions.Logging's LoggerFactory: LoggerFactory.Create composes it with a dependency-injection
// container, and the factory itself reads provider attributes through reflection; at startup those paths paged in
// ~2 MB of code and type data that an idle server never used again (see GoStyleLoggerFactory).
using var loggerFactory = new GoStyleLoggerFactory(logging.Provider);
var log = loggerFactory.CreateLogger("nats-net-server");

foreach (var (key, value) in options.UnsupportedConfig)
{
    log.LogWarning("Configuration \"{Key}\" ({Source}) is not supported yet and is ignored", key, value.Source);
}

var server = new NatsServer(options, loggerFactory)
{
    // A reload re-reads the file and puts the explicit flags back on top, as Go's FlagSnapshot does.
    CommandLineOverrides = cli.ApplyTo,
    Logging = logging,
    TrimMemoryWhenIdle = true,
};

// Exit code per Go's handleSignals: SIGINT exits 0, SIGTERM 1 (and is ignored in lame duck mode).
var stopRequested = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
using var sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, context =>
{
    // Keep the runtime from terminating the process so shutdown can close clients cleanly.
    context.Cancel = true;
    log.LogDebug("Trapped \"interrupt\" signal");
    stopRequested.TrySetResult(0);
});
using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
{
    context.Cancel = true;
    log.LogDebug("Trapped \"terminated\" signal");
    if (!server.IsLameDuckMode)
    {
        stopRequested.TrySetResult(1);
    }
});
using var sighup = PosixSignalRegistration.Create(PosixSignal.SIGHUP, context =>
{
    context.Cancel = true;
    log.LogDebug("Trapped \"hangup\" signal");
    _ = Task.Run(async () =>
    {
        try
        {
            await server.ReloadAsync();
        }
        catch (ReloadException e)
        {
            log.LogError("Failed to reload server configuration: {Error}", e.Message);
        }
    });
});
// SIGUSR1 reopens the log file (after logrotate moved it) and SIGUSR2 enters lame duck mode, as with
// the Go server. .NET has no enum members for them, so the raw Linux numbers are used; other
// platforms simply do not get these handlers.
using var sigusr1 = OperatingSystem.IsLinux()
    ? PosixSignalRegistration.Create((PosixSignal)10, context =>
    {
        context.Cancel = true;
        log.LogDebug("Trapped \"user defined signal 1\" signal");
        if (logging.File is { } file)
        {
            file.Reopen();
            log.LogInformation("Reopened log file");
        }
    })
    : null;
using var sigusr2 = OperatingSystem.IsLinux()
    ? PosixSignalRegistration.Create((PosixSignal)12, context =>
    {
        context.Cancel = true;
        log.LogDebug("Trapped \"user defined signal 2\" signal");
        _ = Task.Run(server.EnterLameDuckModeAsync);
    })
    : null;

try
{
    await server.StartAsync();
}
catch (Exception e) when (e is ListenFailedException or StoreDirectoryLockedException or JetStreamStartException)
{
    // Go's own fatal line for the listener (its text is the whole message).
    log.LogCritical("{Error}", e.Message);
    return 1;
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
        server.PortsFileExecutableName = Path.GetFileNameWithoutExtension(exe);
        portsFile = PortsFile.Write(portsDir, server.PortsFileExecutableName, Environment.ProcessId,
            options.Host, server.Port, options.HttpHost, options.HttpPort);
        server.PortsFilePath = portsFile;
    }
    catch (Exception e) when (e is IOException or UnauthorizedAccessException)
    {
        log.LogError("Error writing ports file ({Dir}): {Error}", portsDir, e.Message);
    }
}

// Either a stop signal, or the end of lame duck mode (which shuts the server down itself).
var exitCode = await Task.WhenAny(stopRequested.Task, server.Stopped) == stopRequested.Task ? stopRequested.Task.Result : 0;
await server.ShutdownAsync();
// A reload may have moved the ports file.
portsFile = server.PortsFilePath;
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
return exitCode;
