using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Clients;

public class ConnectionSettingsTests
{
    [Fact]
    public void StartsWithTheServerLimits_AndNoConnect()
    {
        var settings = new ConnectionSettings(new ServerOptions { MaxPayload = 1234 }, awaitingAuth: true, trace: false);
        Assert.Equal(1234, settings.MaxPayload);
        Assert.Equal(-1, settings.MaxSubscriptions);
        Assert.True(settings.Echo);
        Assert.False(settings.ConnectReceived);
        Assert.Equal(new ParserLimits(settings.Options.MaxControlLine, 1234, false, true), settings.ParserLimits);
        Assert.True(settings.CanStall);
    }

    [Fact]
    public void Connect_TakesEchoAndHeaders_UnlessTheServerRefusesHeaders()
    {
        var connect = new ConnectOptions { Echo = false, Headers = true };
        var settings = new ConnectionSettings(new ServerOptions(), awaitingAuth: false, trace: false);
        settings.ApplyConnect(connect);
        Assert.True(settings.ConnectReceived);
        Assert.False(settings.Echo);
        Assert.True(settings.Headers);

        var noHeaders = new ConnectionSettings(new ServerOptions { NoHeaderSupport = true }, awaitingAuth: false, trace: false);
        noHeaders.ApplyConnect(connect);
        Assert.False(noHeaders.Headers);
    }

    [Fact]
    public void Internal_IsConnected_AndStallsOnlyWhenStallable()
    {
        var settings = new ConnectionSettings(new ServerOptions(), awaitingAuth: true, trace: false);
        settings.MarkInternal(stallable: false);
        Assert.False(settings.AwaitingAuth);
        Assert.True(settings.ConnectReceived);
        Assert.False(settings.CanStall);
        settings.MarkInternal(stallable: true);
        Assert.True(settings.CanStall);
    }

    [Fact]
    public void FirstPong_NeedsInfoOnce_OnlyForProtocol1WithALoweredPayload()
    {
        var settings = new ConnectionSettings(new ServerOptions { MaxPayload = 1000 }, awaitingAuth: false, trace: false);
        Assert.False(settings.FirstPongNeedsInfo(1));
        Assert.False(settings.FirstPongSent);

        settings.ApplyConnect(new ConnectOptions());
        settings.ApplyLimits(new ClientLimits(500, 10, false, false));
        Assert.Equal(10, settings.MaxSubscriptions);
        Assert.True(settings.FirstPongNeedsInfo(1));
        Assert.True(settings.FirstPongSent);
        Assert.False(settings.FirstPongNeedsInfo(1));

        var protocol0 = new ConnectionSettings(new ServerOptions { MaxPayload = 1000 }, awaitingAuth: false, trace: false);
        protocol0.ApplyConnect(new ConnectOptions());
        protocol0.ApplyLimits(new ClientLimits(500, -1, false, false));
        Assert.False(protocol0.FirstPongNeedsInfo(0));
        Assert.True(protocol0.FirstPongSent);
    }
}
