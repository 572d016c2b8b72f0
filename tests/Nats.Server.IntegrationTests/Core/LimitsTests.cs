using System.Text;

namespace Nats.Server.IntegrationTests.Core;

public class LimitsTests
{
    [Fact]
    public async Task MaxConnections_RefusesTheNextClientAfterSendingInfo()
    {
        await using var server = await TestServer.StartAsync(o => o.MaxConnections = 1);
        await using var first = await RawClient.ConnectAsync(server.Port);
        await first.ConnectAndReadInfoAsync();
        await first.SyncAsync();

        await using var second = await RawClient.ConnectAsync(server.Port);
        var text = await second.ReadToEndAsync();
        Assert.StartsWith("INFO {", text);
        Assert.EndsWith("-ERR 'maximum connections exceeded'\r\n", text);

        // The first client is unaffected.
        await first.SyncAsync();
    }

    [Fact]
    public async Task MaxSubscriptions_RefusesTheSubscriptionButKeepsTheConnection()
    {
        await using var server = await TestServer.StartAsync(o => o.MaxSubscriptions = 1);
        await using var client = await RawClient.ConnectAsync(server.Port);
        await client.ConnectAndReadInfoAsync();
        await client.SendAsync("SUB a 1\r\nSUB b 2\r\n");
        var text = await client.SyncAsync();
        Assert.Equal("-ERR 'maximum subscriptions exceeded'\r\nPONG\r\n", text);
    }

    [Fact]
    public async Task StaleConnection_IsClosedWhenPingsGoUnanswered()
    {
        await using var server = await TestServer.StartAsync(o =>
        {
            o.PingInterval = TimeSpan.FromMilliseconds(200);
            o.MaxPingsOut = 1;
        });
        await using var client = await RawClient.ConnectAsync(server.Port);
        await client.ConnectAndReadInfoAsync();
        var text = await client.ReadToEndAsync();
        Assert.Equal("PING\r\n-ERR 'Stale Connection'\r\n", text);
    }

    [Fact]
    public async Task AnsweredPings_KeepTheConnectionAlive()
    {
        await using var server = await TestServer.StartAsync(o =>
        {
            // Generous slack: a loaded machine may take a while to answer, but answered PINGs must
            // reset the count, so three rounds at most two outstanding keep the connection up.
            o.PingInterval = TimeSpan.FromMilliseconds(200);
            o.MaxPingsOut = 2;
        });
        await using var client = await RawClient.ConnectAsync(server.Port);
        await client.ConnectAndReadInfoAsync();
        for (var i = 0; i < 3; i++)
        {
            await client.ReadUntilAsync("PING\r\n");
            await client.SendAsync("PONG\r\n");
        }
        await client.SyncAsync();
    }

    [Fact]
    public async Task AuthTimeout_ClosesASilentClient()
    {
        await using var server = await TestServer.StartAsync(o =>
        {
            o.Username = "u";
            o.Password = "p";
            o.AuthTimeout = TimeSpan.FromMilliseconds(300);
        });
        await using var client = await RawClient.ConnectAsync(server.Port);
        var text = await client.ReadToEndAsync();
        Assert.Contains("\"auth_required\":true", text);
        Assert.EndsWith("-ERR 'Authentication Timeout'\r\n", text);
    }

    [Fact]
    public async Task WrongPassword_IsAnAuthorizationViolation_AndTheRightOneWorks()
    {
        await using var server = await TestServer.StartAsync(o =>
        {
            o.Username = "u";
            o.Password = "p";
        });
        await using (var bad = await RawClient.ConnectAsync(server.Port))
        {
            await bad.ConnectAndReadInfoAsync("{\"user\":\"u\",\"pass\":\"x\"}");
            Assert.Equal("-ERR 'Authorization Violation'\r\n", await bad.ReadToEndAsync());
        }
        await using var good = await RawClient.ConnectAsync(server.Port);
        await good.ConnectAndReadInfoAsync("{\"user\":\"u\",\"pass\":\"p\"}");
        Assert.Equal("+OK\r\nPONG\r\n", await good.SyncAsync());
    }

    [Fact]
    public async Task Token_IsChecked()
    {
        await using var server = await TestServer.StartAsync(o => o.AuthToken = "secret");
        await using (var bad = await RawClient.ConnectAsync(server.Port))
        {
            await bad.ReadUntilAsync("\r\n");
            await bad.SendAsync("PING\r\n");
            Assert.Equal("-ERR 'Authorization Violation'\r\n", await bad.ReadToEndAsync());
        }
        await using var good = await RawClient.ConnectAsync(server.Port);
        await good.ConnectAndReadInfoAsync("{\"verbose\":false,\"auth_token\":\"secret\"}");
        Assert.Equal("PONG\r\n", await good.SyncAsync());
    }

    [Fact]
    public async Task OversizePayload_ClosesOnlyTheOffender()
    {
        await using var server = await TestServer.StartAsync(o => o.MaxPayload = 100);
        await using var other = await RawClient.ConnectAsync(server.Port);
        var info = await other.ConnectAndReadInfoAsync();
        Assert.Contains("\"max_payload\":100", info);
        await other.SendAsync("SUB foo 1\r\n");
        await other.SyncAsync();

        await using var offender = await RawClient.ConnectAsync(server.Port);
        await offender.ConnectAndReadInfoAsync();
        await offender.SendAsync("PUB foo 101\r\n");
        Assert.Equal("-ERR 'Maximum Payload Violation'\r\n", await offender.ReadToEndAsync());

        await using var publisher = await RawClient.ConnectAsync(server.Port);
        await publisher.ConnectAndReadInfoAsync();
        await publisher.SendAsync("PUB foo 2\r\nok\r\n");
        await publisher.SyncAsync();
        Assert.Equal("MSG foo 1 2\r\nok\r\nPONG\r\n", await other.SyncAsync());
    }

    [Fact]
    public async Task SlowConsumer_IsCutWhileThePublisherAndOtherSubscribersGoOn()
    {
        await using var server = await TestServer.StartAsync(o => o.MaxPending = 2 * 1024 * 1024);
        // The stuck reader: tiny receive window, never reads.
        await using var stuck = await RawClient.ConnectAsync(server.Port, receiveBufferSize: 4096);
        await stuck.ConnectAndReadInfoAsync();
        await stuck.SendAsync("SUB data 1\r\n");
        await stuck.SyncAsync();

        await using var healthy = await RawClient.ConnectAsync(server.Port);
        await healthy.ConnectAndReadInfoAsync();
        await healthy.SendAsync("SUB data 1\r\n");
        await healthy.SyncAsync();

        await using var publisher = await RawClient.ConnectAsync(server.Port);
        await publisher.ConnectAndReadInfoAsync();
        const int payloadSize = 1024;
        const int batchSize = 256;
        const int batches = 128;
        var frame = Encoding.ASCII.GetBytes($"PUB data {payloadSize}\r\n{new string('x', payloadSize)}\r\n");
        var batch = new byte[frame.Length * batchSize];
        for (var i = 0; i < batchSize; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }
        var deliveredLength = $"MSG data 1 {payloadSize}\r\n".Length + payloadSize + 2;

        // The healthy reader acknowledges each batch it has fully received; the publisher keeps at
        // most two batches in flight towards it, so only the stuck reader can exceed max_pending.
        var batchesReceived = new SemaphoreSlim(0);
        var reader = Task.Run(async () =>
        {
            long total = 0;
            var expected = (long)deliveredLength * batchSize * batches;
            var acknowledged = 0L;
            while (total < expected)
            {
                total += await healthy.ReadSomeAsync();
                var complete = total / ((long)deliveredLength * batchSize);
                for (; acknowledged < complete; acknowledged++)
                {
                    batchesReceived.Release();
                }
            }
            return total;
        });
        for (var i = 0; i < batches; i++)
        {
            if (i >= 2)
            {
                Assert.True(await batchesReceived.WaitAsync(TimeSpan.FromSeconds(30)), "healthy subscriber stalled");
            }
            await publisher.SendAsync(batch);
        }
        await publisher.SyncAsync();

        Assert.Equal((long)deliveredLength * batchSize * batches, await reader);
        Assert.Equal(1, server.Server.SlowConsumers);
        Assert.Equal(2, server.Server.ClientCount);
        Assert.Equal("PONG\r\n", await healthy.SyncAsync());
    }
}

public class SlowCredentialTests
{
    // bcrypt of "pw" at cost 15 (made with libxcrypt): checking it takes seconds, far longer than
    // the 2 s auth timeout below, while the CONNECT itself arrives well within it.
    private const string SlowHash = "$2b$15$ZuiqqFs/3rKdFC/J/4udWuPSIBF/9SWQrmIrBQl0UNuRGwtO21yKa";

    [Fact]
    public async Task SlowPasswordCheck_IsNotOvertakenByTheAuthTimeout_AndDoesNotStallOthers()
    {
        await using var server = await TestServer.StartAsync(o =>
        {
            o.Users =
            [
                new Nats.Server.Auth.User { Username = "slow", Password = SlowHash },
                new Nats.Server.Auth.User { Username = "fast", Password = "pw" },
            ];
            o.AuthTimeout = TimeSpan.FromSeconds(2);
        });
        await using var slow = await RawClient.ConnectAsync(server.Port);
        await slow.ConnectAndReadInfoAsync("{\"verbose\":false,\"user\":\"slow\",\"pass\":\"pw\"}");
        await slow.SendAsync("PING\r\n");

        // Go clears the auth timer when CONNECT arrives; and the check must not block other clients.
        await using var fast = await RawClient.ConnectAsync(server.Port);
        await fast.ConnectAndReadInfoAsync("{\"verbose\":false,\"user\":\"fast\",\"pass\":\"pw\"}");
        Assert.Equal("PONG\r\n", await fast.SyncAsync());

        // The server's own first PING may come first: the check outlasts the 2 s first-ping timer.
        var text = await slow.ReadUntilAsync("PONG\r\n", TimeSpan.FromSeconds(120));
        Assert.DoesNotContain("-ERR", text);
        Assert.EndsWith("PONG\r\n", text);
    }
}
