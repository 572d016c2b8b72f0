using Microsoft.Extensions.Logging;
using Nats.Server.Configuration;

namespace Nats.Server.Logging;

/// <summary>
/// The executable's logging, built from the options (Go's ConfigureLogger): stderr or a rotating file,
/// level from debug/trace, timestamps from logtime. A reload calls <see cref="Apply"/> with the new options.
/// </summary>
internal sealed class ServerLogging : IDisposable
{
    private readonly TextWriter _console;

    private ServerLogging(GoStyleLoggerProvider provider, TextWriter console)
    {
        Provider = provider;
        _console = console;
    }

    public GoStyleLoggerProvider Provider { get; }

    /// <summary>The log file in use, if logging goes to a file (SIGUSR1 reopens it).</summary>
    public RotatingFileWriter? File => Provider.Writer as RotatingFileWriter;

    /// <summary>Opens the destination; throws IOException/UnauthorizedAccessException when the file cannot be opened.</summary>
    public static ServerLogging Create(ServerOptions options, TextWriter console)
    {
        var writer = OpenWriter(options, console);
        var provider = new GoStyleLoggerProvider(writer, GoStyleLoggerProvider.LevelFor(options.Debug, options.Trace),
            options.Logtime, options.LogtimeUtc, ownsWriter: !ReferenceEquals(writer, console));
        return new ServerLogging(provider, console);
    }

    /// <summary>Re-applies logging options after a reload; the old file is closed if the path changed.</summary>
    public void Apply(ServerOptions options)
    {
        // The open file is kept when it is still the one configured (no reopen, no lost rotation state).
        var current = Provider.Writer;
        var writer = current is RotatingFileWriter file && file.Path == options.LogFile && file.SizeLimit == options.LogSizeLimit
            ? current
            : OpenWriter(options, _console);
        Provider.Reconfigure(writer, GoStyleLoggerProvider.LevelFor(options.Debug, options.Trace), options.Logtime,
            options.LogtimeUtc, ownsWriter: !ReferenceEquals(writer, _console));
    }

    public void Dispose() => Provider.Dispose();

    private static TextWriter OpenWriter(ServerOptions options, TextWriter console) =>
        options.LogFile is { Length: > 0 } path ? new RotatingFileWriter(path, options.LogSizeLimit) : console;
}
