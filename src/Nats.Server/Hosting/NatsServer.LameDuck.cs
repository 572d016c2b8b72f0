using Microsoft.Extensions.Logging;
using Nats.Server.Clients;

namespace Nats.Server.Hosting;

/// <summary>
/// Lame duck mode (SIGUSR2), as the Go server's lameDuckMode: stop accepting clients, tell the ones
/// that understand async INFO (ldm:true) so they can reconnect elsewhere, wait the grace period, close
/// the rest spread over the remaining lame_duck_duration (never more than a second apart), then shut
/// down. The monitoring port keeps answering until the shutdown; /healthz reports the closed listener.
/// </summary>
internal sealed partial class NatsServer
{
    private readonly CancellationTokenSource _lameDuckCancel = new();
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _lameDuck;

    public bool IsLameDuckMode => Volatile.Read(ref _lameDuck) == 1;

    /// <summary>Completes when the server has shut down, whether asked to directly or at the end of lame duck mode.</summary>
    public Task Stopped => _stopped.Task;

    /// <summary>Enters lame duck mode; the returned task ends once the server has shut down (or at once if there is nothing to do).</summary>
    public async Task EnterLameDuckModeAsync()
    {
        if (IsShuttingDown || _listener is null || Interlocked.CompareExchange(ref _lameDuck, 1, 0) != 0)
        {
            return;
        }
        _logger.LogInformation("Entering lame duck mode, stop accepting new clients");
        Cluster?.AnnounceLameDuck();
        _listener.Close();
        if (_acceptLoop is not null)
        {
            // Once the accept loop is done no client can join the list captured below.
            await _acceptLoop.ConfigureAwait(false);
        }
        var options = Options;
        var clients = _clients.Values.ToList();
        if (IsShuttingDown || clients.Count == 0)
        {
            await ShutdownAsync().ConfigureAwait(false);
            return;
        }
        var grace = options.LameDuckGracePeriod;
        var spread = options.LameDuckDuration - grace;
        if (spread <= TimeSpan.Zero)
        {
            spread = TimeSpan.FromSeconds(1);
        }
        var (interval, batch) = ClosePacing(spread, clients.Count);

        SendLameDuckInfo(clients);
        try
        {
            await Task.Delay(grace, _lameDuckCancel.Token).ConfigureAwait(false);
            _logger.LogInformation("Closing existing clients");
            for (var i = 0; i < clients.Count; i++)
            {
                clients[i].CloseConnection(ClosedReason.ServerShutdown);
                if (i == clients.Count - 1)
                {
                    break;
                }
                if (batch == 1 || i % batch == 0)
                {
                    // A random pause of at least half the interval, as Go does.
                    var pause = Random.Shared.NextInt64(interval.Ticks);
                    pause = Math.Max(pause, interval.Ticks / 2);
                    await Task.Delay(TimeSpan.FromTicks(pause), _lameDuckCancel.Token).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Shut down while waiting: that shutdown closes the clients.
            return;
        }
        await ShutdownAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// Go's pacing: the time between two closes is the spread divided by the number of clients, at most
    /// one second; when that comes out below one tick, clients are closed in batches between pauses.
    /// </summary>
    internal static (TimeSpan Interval, int Batch) ClosePacing(TimeSpan spread, int clients)
    {
        var interval = spread.Ticks / clients;
        var batch = 1;
        if (interval < 1)
        {
            interval = 1;
            batch = (int)(clients / spread.Ticks);
        }
        else if (interval > TimeSpan.TicksPerSecond)
        {
            interval = TimeSpan.TicksPerSecond;
        }
        return (TimeSpan.FromTicks(interval), batch);
    }

    /// <summary>Go's sendLDMToClients: one INFO with "ldm":true to each client that takes async INFO.</summary>
    private void SendLameDuckInfo(List<ClientConnection> clients)
    {
        var ldm = BuildInfo(Options, _authenticator);
        ldm.LameDuckMode = true;
        var info = new ClientInfoLine(ldm);
        foreach (var client in clients)
        {
            client.Reload.TrySendAsyncInfo(info.RenderForClient(client.Id, client.RemoteIp));
        }
    }
}
