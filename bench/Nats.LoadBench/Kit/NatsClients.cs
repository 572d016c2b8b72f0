using System.Threading.Channels;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;
using NATS.Client.Core;

namespace Nats.LoadBench.Kit;

/// <summary>
/// NATS.Net connection options every row uses. Two choices matter for what the table means:
/// a full subscription channel makes the client stop reading (Wait) instead of dropping messages
/// itself, so any loss is the server's doing; and no reconnect, so a connection the server cuts
/// stays cut and the row fails instead of silently resubscribing with a gap.
/// </summary>
internal static class NatsClients
{
    public static NatsOpts Options(Endpoint ep, Transport transport, string name) => new()
    {
        Url = transport switch
        {
            Transport.Tls => $"tls://{ep.Host}:{ep.Port}",
            Transport.WebSocket => $"ws://{ep.Host}:{ep.WsPort}",
            _ => $"nats://{ep.Host}:{ep.Port}",
        },
        TlsOpts = transport == Transport.Tls ? new NatsTlsOpts { InsecureSkipVerify = true } : NatsTlsOpts.Default,
        Name = name,
        Echo = false,
        SubPendingChannelCapacity = 16 * 1024,
        SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
        MaxReconnectRetry = 0,
        RetryOnInitialConnect = false,
        // A busy 2-core machine can take seconds to schedule a handshake or a reply.
        ConnectTimeout = TimeSpan.FromSeconds(20),
        CommandTimeout = TimeSpan.FromSeconds(60),
        RequestTimeout = TimeSpan.FromSeconds(60),
        ReaderBufferSize = 1 << 20,
        WriterBufferSize = 1 << 20,
    };
}
