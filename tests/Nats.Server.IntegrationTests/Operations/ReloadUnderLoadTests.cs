namespace Nats.Server.IntegrationTests.Operations;

/// <summary>Reloads while authenticated clients publish and receive: nothing is lost, nobody unaffected is dropped.</summary>
public sealed class ReloadUnderLoadTests
{
    private const int Batches = 40;
    private const int PerBatch = 50;

    private static string Config(string carlPassword) => $$$"""
        authorization {
          users = [
            {user: alice, password: pa, permissions: {publish: ["load"], subscribe: ["nothing"]}}
            {user: bob, password: pb, permissions: {publish: ["nothing"], subscribe: ["load"]}}
            {user: carl, password: {{{carlPassword}}}}
          ]
        }
        max_payload: 1000
        """;

    [Fact]
    public async Task Messages_keep_flowing_across_repeated_reloads()
    {
        await using var server = await OpsServer.StartAsync("ours", Config("c0"));
        await using var publisher = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"user\":\"alice\",\"pass\":\"pa\"}");
        await using var subscriber = await Session.OpenAsync(server.Port, "{\"verbose\":false,\"user\":\"bob\",\"pass\":\"pb\"}");
        Assert.Empty(await subscriber.ExchangeAsync("SUB load 1\r\n"));

        var batch = string.Concat(Enumerable.Repeat("PUB load 1\r\nx\r\n", PerBatch));
        var publishing = Task.Run(async () =>
        {
            for (var i = 0; i < Batches; i++)
            {
                Assert.Empty(await publisher.ExchangeAsync(batch));
            }
        });
        var reloads = 0;
        while (!publishing.IsCompleted)
        {
            Assert.Null(await server.ReloadAsync(Config($"c{++reloads}")));
        }
        await publishing;

        // Everything the publisher's PONGs confirmed was queued to the subscriber before its own PONG.
        var received = await subscriber.ExchangeAsync();
        Assert.Equal(Batches * PerBatch, received.Count(l => l == "MSG load 1 1"));
        Assert.True(reloads >= 1);
    }
}
