using System.Text;

namespace Nats.Server.IntegrationTests.Operations;

/// <summary>A server's log as it is written, line by line, with waits on the line a test expects.</summary>
internal sealed class LogLines
{
    private readonly List<string> _lines = [];
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public int Count
    {
        get
        {
            lock (_lines)
            {
                return _lines.Count;
            }
        }
    }

    public string Text
    {
        get
        {
            lock (_lines)
            {
                return string.Join('\n', _lines);
            }
        }
    }

    public void Add(string line)
    {
        TaskCompletionSource changed;
        lock (_lines)
        {
            _lines.Add(line);
            changed = _changed;
            _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        changed.TrySetResult();
    }

    /// <summary>Waits for a line at or after <paramref name="from"/> that matches; returns it with its index.</summary>
    public async Task<(string Line, int Index)> WaitForAsync(Func<string, bool> match, int from = 0, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            Task changed;
            lock (_lines)
            {
                for (var i = from; i < _lines.Count; i++)
                {
                    if (match(_lines[i]))
                    {
                        return (_lines[i], i);
                    }
                }
                changed = _changed.Task;
            }
            try
            {
                await changed.WaitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"no matching log line after {from}; log:\n{Text}");
            }
        }
    }

    public Task<(string Line, int Index)> WaitForAsync(string contains, int from = 0, TimeSpan? timeout = null) =>
        WaitForAsync(l => l.Contains(contains, StringComparison.Ordinal), from, timeout);

    /// <summary>A TextWriter that feeds whole lines into a <see cref="LogLines"/> (for the in-process server's logger).</summary>
    public sealed class Writer(LogLines lines) : TextWriter
    {
        private readonly StringBuilder _partial = new();

        public override Encoding Encoding => Encoding.UTF8;

        public override void Write(char value)
        {
            lock (_partial)
            {
                if (value == '\n')
                {
                    lines.Add(_partial.ToString().TrimEnd('\r'));
                    _partial.Clear();
                }
                else
                {
                    _partial.Append(value);
                }
            }
        }

        public override void WriteLine(string? value)
        {
            lock (_partial)
            {
                lines.Add(_partial + (value ?? ""));
                _partial.Clear();
            }
        }
    }
}
