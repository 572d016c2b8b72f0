using System.Net.Sockets;
using Nats.Server.Accounts;
using Nats.Server.Auth;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Benchmarks.Probes;

/// <summary>
/// The allocation probe across accounts: the publisher is in account A, the subscriber in B, and
/// every message crosses a stream import (A exports "probe", B imports it under the same name), so
/// the counted bytes are those of the import route on top of the plain path.
/// </summary>
internal static class ImportAllocationProbe
{
    public static async Task<int> RunAsync(int messages)
    {
        SocketEngineSettings.ApplyBeforeFirstSocket();
        var options = new ServerOptions { Host = "127.0.0.1", Port = 0 };
        var exporter = new AccountOptions("A");
        exporter.StreamExports.Add(new ResolvedStreamExport("probe", null, 0));
        var importer = new AccountOptions("B");
        importer.StreamImports.Add(new ResolvedStreamImport("A", "probe", "probe"));
        options.Accounts.Add(exporter);
        options.Accounts.Add(importer);
        options.Users = [new User { Username = "a", Password = "pw", Account = "A" }, new User { Username = "b", Password = "pw", Account = "B" }];
        await using var server = new NatsServer(options);
        await server.StartAsync();

        var subscriber = await AllocationProbe.ConnectAsync(server.Port, "SUB probe 1\r\n", ",\"user\":\"b\",\"pass\":\"pw\"");
        var publisher = await AllocationProbe.ConnectAsync(server.Port, "", ",\"user\":\"a\",\"pass\":\"pw\"");
        List<Socket> subs = [subscriber];
        byte[][] buffers = [new byte[256 * 1024]];
        await AllocationProbe.PumpAsync(publisher, subs, buffers, 50_000, "probe");

        var gen0 = GC.CollectionCount(0);
        var allocated = GC.GetTotalAllocatedBytes(precise: true);
        await AllocationProbe.PumpAsync(publisher, subs, buffers, messages, "probe");
        var delta = GC.GetTotalAllocatedBytes(precise: true) - allocated;
        Console.WriteLine(
            $"stream import A -> B, {messages:N0} messages of 16 B: allocated {delta:N0} bytes " +
            $"({(double)delta / messages:F3} B/msg), GC gen0 +{GC.CollectionCount(0) - gen0}");
        publisher.Dispose();
        subscriber.Dispose();
        return 0;
    }
}
