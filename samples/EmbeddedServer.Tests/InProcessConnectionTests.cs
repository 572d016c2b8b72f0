using Nats.Server.Embedding;
using Nats.Server.NatsNet;
using NATS.Client.Core;

namespace EmbeddedServer.Tests;

/// <summary>NATS.Net connected with no socket at all (Nats.Server.NatsNet): the server admits the pipe like a TCP client.</summary>
public sealed class InProcessConnectionTests
{
    [Fact]
    public async Task PubSub_AndRequestReply_WorkWithoutASocket_AlongsideTcpClients()
    {
        await using var server = await NatsServerHost.StartAsync(new NatsServerHostOptions { EnableMonitoring = true });
        await using var inProcess = new NatsConnection(server.InProcessOpts());
        await using var overTcp = new NatsConnection(new NatsOpts { Url = server.ClientUrl });

        await using var subscription = await inProcess.SubscribeCoreAsync<string>("greet");
        await inProcess.PingAsync();
        await overTcp.PublishAsync("greet", "from tcp");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal("from tcp", (await subscription.Msgs.ReadAsync(timeout.Token)).Data);

        await using var responder = await overTcp.SubscribeCoreAsync<int>("double");
        await overTcp.PingAsync();
        var serving = Task.Run(async () =>
        {
            var request = await responder.Msgs.ReadAsync(timeout.Token);
            await request.ReplyAsync(request.Data * 2);
        });
        var reply = await inProcess.RequestAsync<int, int>("double", 21, cancellationToken: timeout.Token);
        Assert.Equal(42, reply.Data);
        await serving;

        // Both connections are ordinary clients to the server's monitoring.
        using var http = new HttpClient();
        var varz = await http.GetStringAsync(server.MonitoringUrl + "/varz");
        Assert.Contains("\"connections\": 2", varz);
    }

    [Fact]
    public async Task ServerStop_EndsTheInProcessConnection()
    {
        var server = await NatsServerHost.StartAsync();
        await using var client = new NatsConnection(server.InProcessOpts(NatsOpts.Default with { MaxReconnectRetry = 0 }));
        await client.ConnectAsync();
        Assert.Equal(NatsConnectionState.Open, client.ConnectionState);
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        client.ConnectionDisconnected += (_, _) =>
        {
            closed.TrySetResult();
            return ValueTask.CompletedTask;
        };
        await server.DisposeAsync();
        await closed.Task.WaitAsync(TimeSpan.FromSeconds(30));
    }
}
