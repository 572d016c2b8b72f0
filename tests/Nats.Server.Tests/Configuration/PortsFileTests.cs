using System.Text.Json;
using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

public class PortsFileTests
{
    [Fact]
    public void SpecificHostGivesOneUrlPerListener()
    {
        var json = PortsFile.Format("127.0.0.1", 4222, null, 8222);
        Assert.Equal("{\"nats\":[\"nats://127.0.0.1:4222\"],\"monitoring\":[\"http://127.0.0.1:8222\"]}", json);
    }

    [Fact]
    public void NoMonitoringWhenHttpPortIsOff() =>
        Assert.Equal("{\"nats\":[\"nats://[::1]:4222\"]}", PortsFile.Format("::1", 4222, null, 0));

    [Fact]
    public void AnyAddressListsInterfaceAddressesIncludingLoopback()
    {
        var doc = JsonDocument.Parse(PortsFile.Format("0.0.0.0", 5000, null, 0));
        var urls = doc.RootElement.GetProperty("nats").EnumerateArray().Select(e => e.GetString()).ToList();
        Assert.Contains("nats://127.0.0.1:5000", urls);
    }

    [Fact]
    public void WritesExeAndPidNamedFile()
    {
        using var dir = new TempDirectory();
        string path = PortsFile.Write(dir.Path, "nats-net-server", 1234, "127.0.0.1", 4333, "127.0.0.1", 0);
        Assert.Equal(System.IO.Path.Combine(dir.Path, "nats-net-server_1234.ports"), path);
        Assert.Equal("{\"nats\":[\"nats://127.0.0.1:4333\"]}", File.ReadAllText(path));
    }
}
