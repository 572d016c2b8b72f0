using System.Buffers;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Transport;

namespace Nats.Server.Clients;

/// <summary>
/// A connection's inbound pump: receives into a pooled buffer, has the <see cref="CommandDispatcher"/>
/// run every complete command, flushes the clients the batch fed (<see cref="FlushBatch"/>), and
/// waits behind full subscribers (<see cref="StallList"/>) before it parses on. The buffer grows for
/// a heavy producer or an oversize message and shrinks back once that is through.
/// </summary>
internal sealed class ReadLoop
{
    internal const int InitialBufferSize = 16 * 1024;
    internal const int MaxBufferSize = 256 * 1024;

    private readonly ClientConnection _client;
    private readonly ClientTransport _transport;
    private readonly CommandDispatcher _commands;
    private readonly ConnectionSettings _settings;
    private readonly PingTimer _ping;
    private readonly OutboundQueue _outbound;
    private readonly FlushBatch _flushBatch;
    private readonly StallList _stalledOn;
    private readonly ILogger _logger;

    public ReadLoop(ClientConnection client, ClientTransport transport, CommandDispatcher commands, ConnectionSettings settings,
        PingTimer ping, OutboundQueue outbound, FlushBatch flushBatch, StallList stalledOn, ILogger logger)
    {
        _client = client;
        _transport = transport;
        _commands = commands;
        _settings = settings;
        _ping = ping;
        _outbound = outbound;
        _flushBatch = flushBatch;
        _stalledOn = stalledOn;
        _logger = logger;
    }

    /// <summary>Reads until the connection closes; every way out closes it with its reason.</summary>
    public async Task RunAsync()
    {
        var buffer = ArrayPool<byte>.Shared.Rent(InitialBufferSize);
        var filled = 0;
        try
        {
            while (!_outbound.IsClosed)
            {
                int received;
                try
                {
                    received = await _transport.ReceiveAsync(buffer.AsMemory(filled), CancellationToken.None).ConfigureAwait(false);
                }
                catch (TlsHandshakeFailedException e)
                {
                    _client.CloseConnection(e.Throttled ? ClosedReason.MaxConnectionsExceeded : ClosedReason.TlsHandshakeError);
                    break;
                }
                catch (Exception ex) when (ex is SocketException or ObjectDisposedException or IOException)
                {
                    _client.CloseConnection(ClosedReason.ReadError);
                    break;
                }
                if (received == 0)
                {
                    _client.CloseConnection(ClosedReason.ClientClosed);
                    break;
                }
                _ping.NoteActivity(Environment.TickCount64);
                var readFilledBuffer = filled + received == buffer.Length;
                filled += received;

                if (_settings.AwaitingAuth)
                {
                    // Credential checks (bcrypt, ed25519) are slow: run them on the thread pool, not on
                    // the socket engine thread that serves every other connection.
                    await Task.Yield();
                }
                var consumed = _commands.ProcessBuffer(buffer.AsSpan(0, filled), out var needed);
                _flushBatch.FlushAll();
                while (_stalledOn.MustStall && !_outbound.IsClosed)
                {
                    // A subscriber we fed is full: wait for it to drain, then parse the rest of the buffer.
                    await _stalledOn.WaitAllAsync().ConfigureAwait(false);
                    consumed += _commands.ProcessBuffer(buffer.AsSpan(consumed, filled - consumed), out needed);
                    _flushBatch.FlushAll();
                }
                if (_outbound.IsClosed)
                {
                    break;
                }

                var remaining = filled - consumed;
                if (remaining > 0 && consumed > 0)
                {
                    Buffer.BlockCopy(buffer, consumed, buffer, 0, remaining);
                }
                filled = remaining;

                var wanted = NextBufferSize(buffer.Length, needed, readFilledBuffer, filled);
                if (readFilledBuffer)
                {
                    // A heavy producer: leave the socket engine's thread so its other connections keep flowing.
                    await Task.Yield();
                }
                if (wanted > 0)
                {
                    var resized = ArrayPool<byte>.Shared.Rent(wanted);
                    Buffer.BlockCopy(buffer, 0, resized, 0, filled);
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = resized;
                }
            }
        }
        catch (Exception ex)
        {
            _logger.LogError(ex, "{Client} - Unexpected error in read loop", _client);
            _client.CloseConnection(ClosedReason.ReadError);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>
    /// The buffer size to move to, or 0 to keep it: grow for a message bigger than the buffer, or for
    /// throughput when reads fill it; go back to the normal maximum once an oversize message is through.
    /// </summary>
    internal static int NextBufferSize(int length, int needed, bool readFilledBuffer, int filled) =>
        needed > length ? needed
        : readFilledBuffer && length < MaxBufferSize ? length * 2
        : length > MaxBufferSize && filled <= MaxBufferSize / 2 ? MaxBufferSize
        : 0;
}
