using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Nats.Server.Embedding;

namespace Nats.Server.IntegrationTests.Embedding;

/// <summary>ConnectInProcess: the pipe goes through the same admission as TCP (limits, authorization) and closes cleanly both ways.</summary>
public sealed class InProcessConnectionTests
{
    [Fact]
    public async Task Pipe_IsAdmittedLikeTcp_MaxConnectionsAndAuthorizationApply()
    {
        await using var server = await NatsServerHost.StartAsync(new NatsServerHostOptions
        {
            Configure = o =>
            {
                o.MaxConnections = 1;
                o.Username = "u";
                o.Password = "p";
            },
        });

        var first = server.ConnectInProcess();
        var info = await ReadUntilAsync(first.Input, "\r\n");
        Assert.StartsWith("INFO {", info);
        Assert.Contains("\"auth_required\":true", info);

        var second = server.ConnectInProcess();
        Assert.Contains("-ERR 'maximum connections exceeded'", await ReadToEndAsync(second.Input));

        await WriteAsync(first.Output, "CONNECT {\"verbose\":false,\"user\":\"u\",\"pass\":\"wrong\"}\r\nPING\r\n");
        Assert.Contains("-ERR 'Authorization Violation'", await ReadToEndAsync(first.Input));

        var third = server.ConnectInProcess();
        await ReadUntilAsync(third.Input, "\r\n");
        await WriteAsync(third.Output, "CONNECT {\"verbose\":false,\"user\":\"u\",\"pass\":\"p\"}\r\nSUB a 1\r\nPUB a 2\r\nok\r\nPING\r\n");
        var traffic = await ReadUntilAsync(third.Input, "PONG\r\n");
        Assert.Contains("MSG a 1 2\r\nok\r\n", traffic);

        // The client hanging up (completing its output) ends the connection as a TCP FIN does.
        await third.Output.CompleteAsync();
        await ReadToEndAsync(third.Input);
    }

    [Fact]
    public async Task ServerStop_CompletesTheClientsInput()
    {
        var server = await NatsServerHost.StartAsync();
        var pipe = server.ConnectInProcess();
        await ReadUntilAsync(pipe.Input, "\r\n");
        await WriteAsync(pipe.Output, "CONNECT {\"verbose\":false}\r\nPING\r\n");
        await ReadUntilAsync(pipe.Input, "PONG\r\n");

        await server.DisposeAsync();
        await ReadToEndAsync(pipe.Input);
        Assert.Throws<InvalidOperationException>(() => server.ConnectInProcess());
    }

    private static async Task WriteAsync(PipeWriter output, string text) => await output.WriteAsync(Encoding.ASCII.GetBytes(text));

    private static async Task<string> ReadUntilAsync(PipeReader input, string marker)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var result = await input.ReadAsync(timeout.Token);
            var text = Encoding.ASCII.GetString(result.Buffer.ToArray());
            var at = text.IndexOf(marker, StringComparison.Ordinal);
            if (at >= 0)
            {
                input.AdvanceTo(result.Buffer.GetPosition(Encoding.ASCII.GetByteCount(text[..(at + marker.Length)])));
                return text[..(at + marker.Length)];
            }
            Assert.False(result.IsCompleted, $"connection ended before '{marker}': {text}");
            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }

    /// <summary>Reads until the server completes the pipe (it closed the connection).</summary>
    private static async Task<string> ReadToEndAsync(PipeReader input)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var result = await input.ReadAsync(timeout.Token);
            if (result.IsCompleted)
            {
                var text = Encoding.ASCII.GetString(result.Buffer.ToArray());
                input.AdvanceTo(result.Buffer.End);
                return text;
            }
            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }
}
