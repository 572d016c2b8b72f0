using Microsoft.Extensions.Logging;

namespace Nats.Server.Logging;

/// <summary>
/// Writes log lines in the Go server's shape, "[pid] 2006/01/02 15:04:05.000000 [INF] text",
/// so operators' log scrapers keep working. Debug maps to [DBG], Trace to [TRC].
/// </summary>
public sealed class GoStyleLoggerProvider : ILoggerProvider
{
    private readonly TextWriter _writer;
    private readonly bool _ownsWriter;
    private readonly bool _logTime;
    private readonly bool _utc;
    private readonly string _pidPrefix;
    private readonly Lock _sync = new();

    public GoStyleLoggerProvider(TextWriter writer, LogLevel minimumLevel, bool logTime = true, bool utc = false, bool ownsWriter = false)
    {
        _writer = writer;
        _ownsWriter = ownsWriter;
        _logTime = logTime;
        _utc = utc;
        MinimumLevel = minimumLevel;
        _pidPrefix = $"[{Environment.ProcessId}] ";
    }

    public LogLevel MinimumLevel { get; }

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
        string line;
        if (_logTime)
        {
            var now = _utc ? DateTime.UtcNow : DateTime.Now;
            line = $"{_pidPrefix}{now:yyyy/MM/dd HH:mm:ss.ffffff} {tag} {message}";
        }
        else
        {
            line = $"{_pidPrefix}{tag} {message}";
        }
        lock (_sync)
        {
            _writer.WriteLine(line);
            if (exception is not null)
            {
                _writer.WriteLine(exception.ToString());
            }
            _writer.Flush();
        }
    }

    public void Dispose()
    {
        if (_ownsWriter)
        {
            _writer.Dispose();
        }
    }

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
