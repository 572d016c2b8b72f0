using Microsoft.Extensions.Logging;

namespace Nats.Server.IntegrationTests.Tls;

/// <summary>Collects our server's formatted log messages so tests can wait for Go's exact lines.</summary>
internal sealed class LogCapture : ILoggerProvider
{
    private readonly List<string> _lines = [];
    private readonly SemaphoreSlim _changed = new(0);

    public ILoggerFactory CreateFactory() => LoggerFactory.Create(b => b.SetMinimumLevel(LogLevel.Trace).AddProvider(this));

    public IReadOnlyList<string> Lines
    {
        get
        {
            lock (_lines)
            {
                return _lines.ToList();
            }
        }
    }

    /// <summary>Waits until a line contains <paramref name="text"/>; returns it.</summary>
    public async Task<string> WaitForAsync(string text, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            var found = Lines.FirstOrDefault(l => l.Contains(text, StringComparison.Ordinal));
            if (found is not null)
            {
                return found;
            }
            try
            {
                await _changed.WaitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"no log line containing '{text}'; log:\n{string.Join('\n', Lines)}");
            }
        }
    }

    public ILogger CreateLogger(string categoryName) => new Logger(this);

    public void Dispose()
    {
    }

    private void Add(string line)
    {
        lock (_lines)
        {
            _lines.Add(line);
        }
        _changed.Release();
    }

    private sealed class Logger(LogCapture owner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            var level = logLevel switch { LogLevel.Error => "[ERR]", LogLevel.Warning => "[WRN]", LogLevel.Information => "[INF]", _ => "[DBG]" };
            owner.Add($"{level} {formatter(state, exception)}");
        }
    }
}
