using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using NATS.Client.Core;

namespace Nats.Server.NatsNet;

/// <summary>NATS.Net's view of an in-process connection: its sends and receives go through the server's pipes.</summary>
internal sealed class PipeSocketConnection(IDuplexPipe pipe) : INatsSocketConnection
{
    private int _disposed;

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<int> SendAsync(ReadOnlyMemory<byte> buffer)
    {
        var flush = await pipe.Output.WriteAsync(buffer).ConfigureAwait(false);
        if (flush.IsCompleted || flush.IsCanceled)
        {
            throw new IOException("the server closed the in-process connection");
        }
        return buffer.Length;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<int> ReceiveAsync(Memory<byte> buffer)
    {
        while (true)
        {
            var result = await pipe.Input.ReadAsync().ConfigureAwait(false);
            var data = result.Buffer;
            if (!data.IsEmpty)
            {
                var count = (int)Math.Min(buffer.Length, data.Length);
                data.Slice(0, count).CopyTo(buffer.Span);
                pipe.Input.AdvanceTo(data.GetPosition(count));
                return count;
            }
            if (result.IsCompleted || result.IsCanceled)
            {
                pipe.Input.AdvanceTo(data.End);
                return 0;
            }
            pipe.Input.AdvanceTo(data.Start, data.End);
        }
    }

    public ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            // The server's read loop sees end of stream and closes the connection as for a TCP FIN.
            pipe.Output.Complete();
            pipe.Input.CancelPendingRead();
        }
        return ValueTask.CompletedTask;
    }
}
