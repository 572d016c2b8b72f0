using System.Net.Sockets;
using System.Text;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// The allocation probe for request/reply as the harness's reqrep rows run it: requesters with one
/// request in flight each, services in a queue group that answer on the request's reply subject.
/// Raw sockets with fixed-size frames, so what is counted is the server's. With "unique" every
/// request has its own reply subject (_INBOX.rN.00000042 under a _INBOX.rN.* subscription), as
/// NATS.Net's requests do.
/// </summary>
internal static class RequestReplyAllocationProbe
{
    public static async Task<int> RunAsync(int requests, bool unique, int requesters = 10, int services = 2)
    {
        SocketEngineSettings.ApplyBeforeFirstSocket();
        await using var server = new NatsServer(new ServerOptions { Host = "127.0.0.1", Port = 0, PingInterval = TimeSpan.FromMinutes(10) });
        await server.StartAsync();

        var serviceSockets = new List<Socket>();
        for (var i = 0; i < services; i++)
        {
            serviceSockets.Add(await AllocationProbe.ConnectAsync(server.Port, "SUB svc q 1\r\n"));
        }
        var requesterSockets = new List<Socket>();
        for (var i = 0; i < requesters; i++)
        {
            requesterSockets.Add(await AllocationProbe.ConnectAsync(server.Port, unique ? $"SUB _INBOX.r{i}.* 2\r\n" : $"SUB _INBOX.r{i} 2\r\n"));
        }
        using var stop = new CancellationTokenSource();
        var serving = serviceSockets.Select(s => Task.Run(() => ServeAsync(s, InboxLength(unique), stop.Token))).ToArray();

        await RunRequestsAsync(requesterSockets, 2_000, unique);
        using var types = new AllocationTypes();
        types.On = true;
        var gen0 = GC.CollectionCount(0);
        var allocated = GC.GetTotalAllocatedBytes(precise: true);
        await RunRequestsAsync(requesterSockets, requests, unique);
        var delta = GC.GetTotalAllocatedBytes(precise: true) - allocated;
        types.On = false;
        Console.WriteLine(
            $"request/reply{(unique ? " (a reply subject per request)" : "")} {requesters} requesters x {services} services (queue group), {requests:N0} requests of 16 B: allocated {delta:N0} bytes " +
            $"({(double)delta / requests:F3} B/request), GC gen0 +{GC.CollectionCount(0) - gen0}");
        types.Print();

        stop.Cancel();
        foreach (var s in requesterSockets.Concat(serviceSockets))
        {
            s.Dispose();
        }
        await Task.WhenAll(serving.Select(t => t.ContinueWith(_ => { })));
        return 0;
    }

    private static int InboxLength(bool unique) => unique ? "_INBOX.r0.00000000".Length : "_INBOX.r0".Length;

    private static Task RunRequestsAsync(List<Socket> requesters, int requests, bool unique) =>
        Task.WhenAll(requesters.Select((socket, index) => Task.Run(async () =>
        {
            var inbox = unique ? $"_INBOX.r{index}.00000000" : $"_INBOX.r{index}";
            var request = Encoding.ASCII.GetBytes($"PUB svc {inbox} 16\r\n0123456789abcdef\r\n");
            var replyLength = Encoding.ASCII.GetBytes($"MSG {inbox} 2 16\r\n0123456789abcdef\r\n").Length;
            var buffer = new byte[4096];
            for (var n = index; n < requests; n += requesters.Count)
            {
                if (unique)
                {
                    // The request counter in the reply subject's last 8 characters, written in place (no per-request garbage here).
                    for (int i = 0, value = n; i < 8; i++, value /= 10)
                    {
                        request["PUB svc _INBOX.r0.".Length + 7 - i] = (byte)('0' + value % 10);
                    }
                }
                await socket.SendAsync(request.AsMemory(), SocketFlags.None);
                var received = 0;
                while (received < replyLength)
                {
                    var read = await socket.ReceiveAsync(buffer.AsMemory(received), SocketFlags.None);
                    if (read == 0)
                    {
                        throw new IOException("requester closed after " + Encoding.ASCII.GetString(buffer, 0, received));
                    }
                    received += read;
                    received = AnswerPing(socket, buffer, received);
                }
            }
        })));

    /// <summary>Answers every request (frames "MSG svc 1 INBOX 16\r\n" + 18 bytes, all the same length) on its reply subject.</summary>
    private static async Task ServeAsync(Socket socket, int inboxLength, CancellationToken stop)
    {
        var frameLength = "MSG svc 1 ".Length + inboxLength + " 16\r\n0123456789abcdef\r\n".Length;
        var buffer = new byte[64 * 1024];
        var reply = Encoding.ASCII.GetBytes("PUB " + new string('x', inboxLength) + " 16\r\n0123456789abcdef\r\n");
        var filled = 0;
        while (!stop.IsCancellationRequested)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(filled), SocketFlags.None);
            if (read == 0)
            {
                return;
            }
            filled += read;
            var offset = 0;
            while (true)
            {
                if (filled - offset >= 6 && buffer.AsSpan(offset, 6).SequenceEqual("PING\r\n"u8))
                {
                    socket.Send("PONG\r\n"u8);
                    offset += 6;
                    continue;
                }
                if (filled - offset < frameLength)
                {
                    break;
                }
                buffer.AsSpan(offset + "MSG svc 1 ".Length, inboxLength).CopyTo(reply.AsSpan("PUB ".Length));
                await socket.SendAsync(reply.AsMemory(), SocketFlags.None);
                offset += frameLength;
            }
            Buffer.BlockCopy(buffer, offset, buffer, 0, filled - offset);
            filled -= offset;
        }
    }

    /// <summary>The server's first PING comes a few seconds in whatever the interval: answer it and drop it from the buffer.</summary>
    private static int AnswerPing(Socket socket, byte[] buffer, int filled)
    {
        var ping = "PING\r\n"u8;
        if (filled >= ping.Length && buffer.AsSpan(0, ping.Length).SequenceEqual(ping))
        {
            socket.Send("PONG\r\n"u8);
            Buffer.BlockCopy(buffer, ping.Length, buffer, 0, filled - ping.Length);
            return filled - ping.Length;
        }
        return filled;
    }
}
