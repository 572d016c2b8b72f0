using System.IO.Pipelines;
using System.Text;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Transport;

namespace Nats.Server.Tests.Clients;

/// <summary>
/// One <see cref="ClientConnection"/> of a server that is not listening, run over an in-memory pipe:
/// the test writes protocol text and reads what the connection answers, without a socket.
/// </summary>
internal sealed class PipeClient : IAsyncDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly IDuplexPipe _pipe;
    private readonly StringBuilder _received = new();
    private int _consumed;

    public PipeClient(ServerOptions? options = null)
    {
        Server = new NatsServer(options ?? new ServerOptions());
        var (transport, pipe) = PipeTransport.CreatePair();
        _pipe = pipe;
        Connection = new ClientConnection(Server, transport, 1, Server.GlobalAccount, NullLogger.Instance);
        Run = Connection.RunAsync("INFO {}\r\n"u8.ToArray(), overConnectionLimit: false);
    }

    public NatsServer Server { get; }

    public ClientConnection Connection { get; }

    /// <summary>Both loops; completes when the connection has ended.</summary>
    public Task Run { get; }

    public async Task SendAsync(string text)
    {
        await _pipe.Output.WriteAsync(Encoding.UTF8.GetBytes(text));
    }

    /// <summary>Reads until <paramref name="expected"/> has arrived; returns everything after what earlier calls consumed, up to and including it.</summary>
    public async Task<string> ReadUntilAsync(string expected)
    {
        using var cancel = new CancellationTokenSource(Timeout);
        while (true)
        {
            var at = _received.ToString().IndexOf(expected, _consumed, StringComparison.Ordinal);
            if (at >= 0)
            {
                var end = at + expected.Length;
                var text = _received.ToString(_consumed, end - _consumed);
                _consumed = end;
                return text;
            }
            var result = await _pipe.Input.ReadAsync(cancel.Token);
            foreach (var segment in result.Buffer)
            {
                _received.Append(Encoding.UTF8.GetString(segment.Span));
            }
            _pipe.Input.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted && result.Buffer.IsEmpty)
            {
                throw new InvalidOperationException($"connection ended before \"{expected}\" arrived; got: {_received}");
            }
        }
    }

    /// <summary>Waits until the connection has ended (both loops done).</summary>
    public Task WaitClosedAsync() => Run.WaitAsync(Timeout);

    public async ValueTask DisposeAsync()
    {
        Connection.CloseConnection(ClosedReason.ServerShutdown);
        await _pipe.Output.CompleteAsync();
        try
        {
            await Run.WaitAsync(Timeout);
        }
        finally
        {
            await _pipe.Input.CompleteAsync();
        }
    }
}
