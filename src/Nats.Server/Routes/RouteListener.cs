using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Nats.Server.Transport;

namespace Nats.Server.Routes;

/// <summary>A peer port (routes, leaf nodes, gateways): accepts peers and hands each socket to its subsystem.</summary>
internal sealed class RouteListener
{
    private readonly Action<Socket> _accepted;
    private readonly string _kind;
    private readonly ILogger _logger;
    private readonly Socket _socket;
    private Task? _loop;

    public RouteListener(Action<Socket> accepted, string kind, string host, int port, ILogger logger)
    {
        _accepted = accepted;
        _kind = kind;
        _logger = logger;
        var address = string.IsNullOrEmpty(host) || host is "0.0.0.0" or "*" ? IPAddress.Any
            : host is "::" or "[::]" ? IPAddress.IPv6Any
            : IPAddress.TryParse(host.Trim('[', ']'), out var parsed) ? parsed
            : Dns.GetHostAddresses(host).First();
        _socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (address.Equals(IPAddress.IPv6Any))
        {
            _socket.DualMode = true;
        }
        ListenerSocket.AllowRebindOverTimeWait(_socket);
        try
        {
            _socket.Bind(new IPEndPoint(address, port < 0 ? 0 : port));
            _socket.Listen(128);
        }
        catch (SocketException e)
        {
            _socket.Dispose();
            // Go's fatal line from its accept loops ("router" is what Go calls the route port there).
            var goKind = kind == "route" ? "router" : kind;
            throw new Hosting.ListenFailedException(
                $"Error listening on {goKind} port: {port} - {Hosting.ListenFailedException.ListenError(host, port, e)}", e);
        }
        catch
        {
            _socket.Dispose();
            throw;
        }
        Port = ((IPEndPoint)_socket.LocalEndPoint!).Port;
    }

    /// <summary>The port bound (a free one when the configuration said -1).</summary>
    public int Port { get; }

    public void Start(CancellationToken stop) => _loop = Task.Run(() => AcceptLoopAsync(stop), CancellationToken.None);

    private async Task AcceptLoopAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await _socket.AcceptAsync(stop).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
            {
                break;
            }
            catch (SocketException e)
            {
                if (stop.IsCancellationRequested)
                {
                    break;
                }
                _logger.LogError("Temporary {Kind} accept error: {Error}", _kind, e.Message);
                await Task.Delay(10, CancellationToken.None).ConfigureAwait(false);
                continue;
            }
            try
            {
                socket.NoDelay = true;
                _accepted(socket);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // Reset by the peer between accept and set-up (a port scan, a health check): that connection is
                // gone, the accept loop is not.
                socket.Dispose();
                _logger.LogDebug("{Kind} connection reset before set-up: {Error}", _kind, e.Message);
            }
        }
    }

    public async Task StopAsync()
    {
        _socket.Close();
        if (_loop is not null)
        {
            await _loop.ConfigureAwait(false);
        }
    }
}
