using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Runtime.CompilerServices;

namespace Nats.Server.Transport;

/// <summary>
/// An in-process client connection with no socket: two pipes, one per direction, admitted like a TCP
/// client (Go's InProcessConn gives nats.go the same). The server half is this transport; the client
/// half is the <see cref="IDuplexPipe"/> from <see cref="CreatePair"/>.
/// </summary>
internal sealed class PipeTransport : ClientTransport
{
    // Roughly a loopback socket's buffers: a client that stops reading stalls the writer, as TCP would.
    private static readonly PipeOptions Options = new(pauseWriterThreshold: 1024 * 1024, resumeWriterThreshold: 512 * 1024, useSynchronizationContext: false);

    private readonly PipeReader _input;
    private readonly PipeWriter _output;
    // Guards the writer's completion against a send in progress (a PipeWriter is single-threaded);
    // taken once per send, which carries a whole batch.
    private readonly Lock _gate = new();
    private bool _writing;
    private bool _outputCompleted;
    private int _aborted;

    private PipeTransport(PipeReader input, PipeWriter output)
    {
        _input = input;
        _output = output;
    }

    /// <summary>Creates the server's transport and the client's end of the same connection.</summary>
    public static (PipeTransport Server, IDuplexPipe Client) CreatePair()
    {
        var toServer = new Pipe(Options);
        var toClient = new Pipe(Options);
        return (new PipeTransport(toServer.Reader, toClient.Writer), new DuplexPipe(toClient.Reader, toServer.Writer));
    }

    public override EndPoint? RemoteEndPoint => null;

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await _input.ReadAsync(cancellationToken).ConfigureAwait(false);
            var data = result.Buffer;
            if (!data.IsEmpty && Volatile.Read(ref _aborted) == 0)
            {
                var count = (int)Math.Min(buffer.Length, data.Length);
                data.Slice(0, count).CopyTo(buffer.Span);
                _input.AdvanceTo(data.GetPosition(count));
                return count;
            }
            if (result.IsCompleted || result.IsCanceled || Volatile.Read(ref _aborted) == 1)
            {
                // End of stream for the read loop; completing our reader tells a writing client we are gone.
                _input.AdvanceTo(data.End);
                _input.Complete();
                return 0;
            }
            _input.AdvanceTo(data.Start, data.End);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        lock (_gate)
        {
            if (_aborted == 1)
            {
                throw new IOException("in-process connection closed");
            }
            _writing = true;
        }
        try
        {
            var flush = await _output.WriteAsync(data, cancellationToken).ConfigureAwait(false);
            if (flush.IsCompleted || flush.IsCanceled)
            {
                throw new IOException("in-process connection closed");
            }
            return data.Length;
        }
        finally
        {
            lock (_gate)
            {
                _writing = false;
                CompleteOutputIfAbortedLocked();
            }
        }
    }

    public override void Abort()
    {
        lock (_gate)
        {
            if (_aborted == 1)
            {
                return;
            }
            Volatile.Write(ref _aborted, 1);
            if (_writing)
            {
                // The send in progress completes the writer when it returns.
                _output.CancelPendingFlush();
            }
            CompleteOutputIfAbortedLocked();
        }
        // The client reads end of stream; a read loop parked in ReceiveAsync wakes up and returns 0.
        _input.CancelPendingRead();
    }

    private void CompleteOutputIfAbortedLocked()
    {
        if (_aborted == 1 && !_writing && !_outputCompleted)
        {
            _outputCompleted = true;
            _output.Complete();
        }
    }

    public override void Dispose() => Abort();

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
