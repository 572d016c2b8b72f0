using System.Text;
using Microsoft.Extensions.Logging.Abstractions;
using Nats.Server.Accounts.SystemEvents;
using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;
using Nats.Server.Subscriptions;

namespace Nats.Server.Tests.Accounts.SystemEvents;

public sealed class SystemAccountServiceTests
{
    [Fact]
    public void Hash_IsGosGetHashOfTheServerName()
    {
        // Seen on a Go 2.9.10 server: its inbox subscription was $SYS._INBOX.DP0KDFLn.* for this name.
        Assert.Equal("DP0KDFLn", SystemAccountService.Hash("NDERCCVCMPPOOG6HZNOU3G5VT3PZ7AH5FFLSKSQO2YALDIH7SUFNHTYM"));
    }

    [Fact]
    public void EventIds_AreUniqueNuidShapedStrings()
    {
        var ids = new EventIds();
        var seen = new HashSet<string>();
        for (var i = 0; i < 10_000; i++)
        {
            var id = ids.Next();
            Assert.Matches("^[0-9A-Za-z]{22}$", id);
            Assert.True(seen.Add(id), $"duplicate id {id}");
        }
    }

    [Fact]
    public void InternalSubscription_ReceivesWhatTheInternalClientPublishes_WithoutASocket()
    {
        var server = new NatsServer(new ServerOptions());
        var account = server.SystemAccount!;
        var client = InternalClient.Create(server, 1, account, NullLogger.Instance);
        var publisher = new Nats.Server.Delivery.InternalPublisher(client);
        var received = new List<(string Subject, string Reply, string Body)>();
        InternalClient.Subscribe(client, "$SYS.TEST.*", "1", (Subscription _, Nats.Server.Delivery.MessageOrigin _, ReadOnlySpan<byte> subject,
            ReadOnlySpan<byte> reply, ReadOnlySpan<byte> _, ReadOnlySpan<byte> body) =>
        {
            received.Add((Encoding.UTF8.GetString(subject), Encoding.UTF8.GetString(reply), Encoding.UTF8.GetString(body)));
            return true;
        });

        Assert.True(publisher.Publish(account, "$SYS.TEST.one"u8, "_INBOX.r"u8, default, "{\"a\":1}"u8, replySet: true));
        Assert.True(publisher.Publish(account, "$SYS.TEST.two"u8, default, default, ""u8, replySet: true));
        Assert.False(publisher.Publish(account, "$SYS.OTHER"u8, default, default, "x"u8, replySet: true));
        // Another account's index is another subject space.
        Assert.False(publisher.Publish(server.GlobalAccount, "$SYS.TEST.one"u8, default, default, "x"u8, replySet: true));

        Assert.Equal([("$SYS.TEST.one", "_INBOX.r", "{\"a\":1}"), ("$SYS.TEST.two", "", "")], received);
        Assert.Equal(1, account.SubList.Count);
    }

    [Fact]
    public void NoSystemAccount_NoSystemService()
    {
        var server = new NatsServer(new ServerOptions { NoSystemAccount = true });
        Assert.Null(server.SystemAccount);
        Assert.Null(server.SystemEvents);
    }
}
