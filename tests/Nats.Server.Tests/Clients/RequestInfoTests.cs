using System.Text;
using Nats.Server.Clients;

namespace Nats.Server.Tests.Clients;

public class RequestInfoTests
{
    private static RequestInfo Info(bool share) => new("A", share, new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc), "10.0.0.1", 7,
        "bob", "app", "go", "1.2.3", TimeSpan.FromTicks(15), "srv");

    [Fact]
    public void NotShared_CarriesOnlyAccountAndRtt()
    {
        Assert.Equal("{\"acc\":\"A\",\"rtt\":1500}", Encoding.UTF8.GetString(Info(share: false).ToJson()));
    }

    [Fact]
    public void Shared_CarriesTheClientInGosFieldOrder()
    {
        Assert.Equal(
            "{\"start\":\"2026-01-02T03:04:05Z\",\"host\":\"10.0.0.1\",\"id\":7,\"acc\":\"A\",\"user\":\"bob\",\"name\":\"app\",\"lang\":\"go\","
            + "\"ver\":\"1.2.3\",\"rtt\":1500,\"server\":\"srv\",\"kind\":\"Client\",\"client_type\":\"nats\"}",
            Encoding.UTF8.GetString(Info(share: true).ToJson()));
    }

    [Fact]
    public void IntoTheSystemAccount_AddsServerAndCluster_AsGosSystemImport()
    {
        // What a Go 2.9.10 non-JetStream server sends with a request through its $JS.API.> import (seen on the wire).
        var info = Info(share: false) with { Cluster = "T", ServerInfo = true };
        Assert.Equal("{\"acc\":\"A\",\"rtt\":1500,\"server\":\"srv\",\"cluster\":\"T\"}", Encoding.UTF8.GetString(info.ToJson()));
    }

    [Fact]
    public void Shared_CarriesTheClusterAfterTheServer()
    {
        var json = Encoding.UTF8.GetString((Info(share: true) with { Cluster = "T" }).ToJson());
        Assert.Contains("\"server\":\"srv\",\"cluster\":\"T\",\"kind\":\"Client\"", json);
    }

    [Fact]
    public void EmptyFields_AndZeroRtt_AreLeftOut()
    {
        var info = Info(share: true) with { User = null, Name = "", Lang = null, Version = null, Rtt = TimeSpan.Zero };
        Assert.Equal("{\"start\":\"2026-01-02T03:04:05Z\",\"host\":\"10.0.0.1\",\"id\":7,\"acc\":\"A\",\"server\":\"srv\",\"kind\":\"Client\",\"client_type\":\"nats\"}",
            Encoding.UTF8.GetString(info.ToJson()));
    }
}
