using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;

namespace Nats.Server.IntegrationTests.Cluster;

/// <summary>
/// A TCP relay in front of one server's route port; every route into that server passes through it, because the
/// server advertises the relay's port. It learns which peer dialled from the route CONNECT's "name" (the dialler's
/// server id), so a test can cut exactly the links to chosen peers: their connections are closed and new ones
/// refused until restored, which is what a network partition looks like to both servers.
/// </summary>
internal sealed partial class RouteProxy : IAsyncDisposable
{
    private readonly TcpListener _listener;
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _gate = new();
    private readonly List<Relay> _relays = [];
    private readonly Task _acceptLoop;
    private HashSet<string> _blocked = [];
    private int _refused;

    public RouteProxy()
    {
        _listener = new TcpListener(IPAddress.Loopback, 0);
        _listener.Start();
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _acceptLoop = AcceptLoopAsync();
    }

    /// <summary>The port peers dial (the server's advertised route address).</summary>
    public int Port { get; }

    /// <summary>The server's real route port; 0 while the server is down (connections are then closed at once).</summary>
    public int UpstreamPort { get; set; }

    /// <summary>Connections closed at once because the server was down (each one a dial attempt that failed).</summary>
    public int Refused => Volatile.Read(ref _refused);

    /// <summary>Relays open now whose dialler has identified itself.</summary>
    public int IdentifiedRelays
    {
        get
        {
            lock (_gate)
            {
                return _relays.Count(r => r.PeerName is not null);
            }
        }
    }

    /// <summary>Closes the relays from these server ids and refuses their new ones; every other id is let through again.</summary>
    public void Block(IReadOnlyCollection<string> serverIds)
    {
        List<Relay> doomed;
        lock (_gate)
        {
            _blocked = [.. serverIds];
            doomed = _relays.Where(r => r.PeerName is { } name && _blocked.Contains(name)).ToList();
        }
        foreach (var relay in doomed)
        {
            relay.Close();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        List<Relay> all;
        lock (_gate)
        {
            all = [.. _relays];
        }
        foreach (var relay in all)
        {
            relay.Close();
        }
        try
        {
            await _acceptLoop;
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
        }
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            var dialler = await _listener.AcceptSocketAsync(_stop.Token);
            _ = RelayAsync(dialler);
        }
    }

    private async Task RelayAsync(Socket dialler)
    {
        var upstreamPort = UpstreamPort;
        var server = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        dialler.NoDelay = true;
        var relay = new Relay(dialler, server);
        try
        {
            if (upstreamPort == 0)
            {
                Interlocked.Increment(ref _refused);
                return;
            }
            await server.ConnectAsync(IPAddress.Loopback, upstreamPort, _stop.Token);
            lock (_gate)
            {
                _relays.Add(relay);
            }
            await Task.WhenAll(PumpAsync(relay, dialler, server, identify: true), PumpAsync(relay, server, dialler, identify: false));
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The server is down or a side hung up: the route sees a closed connection, as over a real network.
        }
        finally
        {
            lock (_gate)
            {
                _relays.Remove(relay);
            }
            relay.Close();
        }
    }

    private async Task PumpAsync(Relay relay, Socket from, Socket to, bool identify)
    {
        var buffer = new byte[64 * 1024];
        var head = identify ? new StringBuilder() : null;
        try
        {
            while (true)
            {
                var n = await from.ReceiveAsync(buffer, SocketFlags.None, _stop.Token);
                if (n == 0)
                {
                    break;
                }
                if (head is not null)
                {
                    head.Append(Encoding.ASCII.GetString(buffer, 0, n));
                    var name = NameField().Match(head.ToString());
                    if (name.Success || head.Length > 16 * 1024)
                    {
                        head = null;
                        if (name.Success && !Identify(relay, name.Groups[1].Value))
                        {
                            break;
                        }
                    }
                }
                for (var sent = 0; sent < n;)
                {
                    sent += await to.SendAsync(buffer.AsMemory(sent, n - sent), SocketFlags.None, _stop.Token);
                }
            }
        }
        finally
        {
            // Half a relay is no relay: whichever side ends, both close, as a cut cable would.
            relay.Close();
        }
    }

    /// <summary>Records who dialled; false when that peer is cut off.</summary>
    private bool Identify(Relay relay, string name)
    {
        lock (_gate)
        {
            relay.PeerName = name;
            return !_blocked.Contains(name);
        }
    }

    [GeneratedRegex("\"name\"\\s*:\\s*\"([^\"]*)\"")]
    private static partial Regex NameField();

    private sealed class Relay(Socket dialler, Socket server)
    {
        private int _closed;

        public string? PeerName { get; set; }

        public void Close()
        {
            if (Interlocked.Exchange(ref _closed, 1) == 1)
            {
                return;
            }
            foreach (var socket in (Socket[])[dialler, server])
            {
                try
                {
                    // An abortive close (RST), so neither server lingers on a half-closed route.
                    socket.LingerState = new LingerOption(true, 0);
                    socket.Close();
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                }
            }
        }
    }
}
