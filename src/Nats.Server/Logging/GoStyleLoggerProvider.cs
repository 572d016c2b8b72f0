using Microsoft.Extensions.Logging;

namespace Nats.Server.Logging;

/// <summary>
/// Writes log lines in the Go server's shape, "[pid] 2006/01/02 15:04:05.000000 [INF] text",
/// so operators' log scrapers keep working. Debug maps to [DBG], Trace to [TRC]. A configuration
/// reload swaps the destination and settings in one step (<see cref="Reconfigure"/>).
/// </summary>
internal sealed class GoStyleLoggerProvider : ILoggerProvider
{
    private readonly string _pidPrefix;
    private readonly Lock _sync = new();
    private volatile Settings _settings;

    public GoStyleLoggerProvider(TextWriter writer, LogLevel minimumLevel, bool logTime = true, bool utc = false, bool ownsWriter = false)
    {
        _settings = new Settings(writer, ownsWriter, logTime, utc, minimumLevel);
        _pidPrefix = $"[{Environment.ProcessId}] ";
    }

    public LogLevel MinimumLevel => _settings.MinimumLevel;

    /// <summary>The current destination.</summary>
    public TextWriter Writer => _settings.Writer;

    /// <summary>Switches destination and settings; the previous writer is disposed when this provider owned it.</summary>
    public void Reconfigure(TextWriter writer, LogLevel minimumLevel, bool logTime, bool utc, bool ownsWriter)
    {
        Settings previous;
        lock (_sync)
        {
            previous = _settings;
            _settings = new Settings(writer, ownsWriter, logTime, utc, minimumLevel);
        }
        if (previous.OwnsWriter && !ReferenceEquals(previous.Writer, writer))
        {
            previous.Writer.Dispose();
        }
    }

    /// <summary>Maps nats-server's -D/-V flags to a level: trace beats debug beats info.</summary>
    public static LogLevel LevelFor(bool debug, bool trace) =>
        trace ? LogLevel.Trace : debug ? LogLevel.Debug : LogLevel.Information;

    public ILogger CreateLogger(string categoryName) => new GoStyleLogger(this);

    internal void Write(LogLevel level, string message, Exception? exception)
    {
        var tag = level switch
        {
            LogLevel.Trace => "[TRC]",
            LogLevel.Debug => "[DBG]",
            LogLevel.Information => "[INF]",
            LogLevel.Warning => "[WRN]",
            LogLevel.Error => "[ERR]",
            _ => "[FTL]",
        };
        var settings = _settings;
        string line;
        if (settings.LogTime)
        {
            var now = settings.Utc ? DateTime.UtcNow : DateTime.Now;
            line = $"{_pidPrefix}{now:yyyy/MM/dd HH:mm:ss.ffffff} {tag} {message}";
        }
        else
        {
            line = $"{_pidPrefix}{tag} {message}";
        }
        lock (_sync)
        {
            // Re-read under the lock: a reconfiguration may have disposed the writer seen above.
            var writer = _settings.Writer;
            writer.WriteLine(line);
            if (exception is not null)
            {
                writer.WriteLine(exception.ToString());
            }
            writer.Flush();
        }
    }

    public void Dispose()
    {
        var settings = _settings;
        if (settings.OwnsWriter)
        {
            settings.Writer.Dispose();
        }
    }

    private sealed record Settings(TextWriter Writer, bool OwnsWriter, bool LogTime, bool Utc, LogLevel MinimumLevel);

    private sealed class GoStyleLogger(GoStyleLoggerProvider provider) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= provider.MinimumLevel && logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
            {
                return;
            }
            provider.Write(logLevel, formatter(state, exception), exception);
        }
    }
}
