using Nats.Server.Configuration;
using Nats.Server.IntegrationTests.Monitoring;

namespace Nats.Server.IntegrationTests.SystemAccount;

/// <summary>
/// System events reach another account through a stream import (issue 9 §3): the server's own
/// publish goes through the same import routing as a client's. Before the delivery seam this threw
/// a NullReferenceException in the fan-out and the importer got nothing; Go delivers every event.
/// </summary>
public sealed class SystemEventImportTests : IAsyncLifetime
{
    private const string Config = """
        system_account: SYS
        accounts {
          SYS {
            users: [ {user: sys, password: p} ]
            exports: [ {stream: "$SYS.ACCOUNT.>"} ]
          }
          A { users: [ {user: a, password: a} ] }
          B {
            users: [ {user: b, password: b} ]
            imports: [ {stream: {account: SYS, subject: "$SYS.ACCOUNT.>"}, prefix: sysev} ]
          }
        }
        """;

    private MonitoredServer _go = null!;
    private MonitoredServer _ours = null!;
    private string _configFile = "";

    public async Task InitializeAsync()
    {
        _configFile = Path.Combine(Directory.CreateTempSubdirectory("nats-sysimport-").FullName, "server.conf");
        await File.WriteAllTextAsync(_configFile, Config);
        _go = await GoMonitoredServer.StartAsync(_configFile);
        _ours = await OurMonitoredServer.StartAsync(options =>
        {
            var bound = ConfigBinder.Bind(options, ConfigParser.Parse(Config, "sysimport-test"));
            Assert.Empty(bound.Errors);
        });
    }

    public async Task DisposeAsync()
    {
        await _go.DisposeAsync();
        await _ours.DisposeAsync();
        Directory.Delete(Path.GetDirectoryName(_configFile)!, recursive: true);
    }

    [Fact]
    public async Task AccountEvents_ImportedWithAPrefix_ReachTheImporter_AsInGo()
    {
        var go = await ImportedEventsAsync(_go);
        var ours = await ImportedEventsAsync(_ours);
        Assert.Equal(
            ["sysev.$SYS.ACCOUNT.A.SERVER.CONNS", "sysev.$SYS.ACCOUNT.A.CONNECT", "sysev.$SYS.ACCOUNT.A.SERVER.CONNS", "sysev.$SYS.ACCOUNT.A.DISCONNECT"],
            ours.Select(m => m.Subject));
        // Go saves the closed client (the DISCONNECT) on its own goroutine, racing the account update.
        if (go[2].Subject.EndsWith("DISCONNECT", StringComparison.Ordinal))
        {
            (go[2], go[3]) = (go[3], go[2]);
        }
        Assert.Equal(go.Select(m => m.Subject), ours.Select(m => m.Subject));
        for (var i = 0; i < go.Count; i++)
        {
            SystemAccountDifferentialTests.AssertSameLine(go[i], ours[i]);
            JsonCompare.SameKeys(go[i].Json, ours[i].Json, "");
            JsonCompare.SameValues(go[i].Json, ours[i].Json, "type");
        }
    }

    private static async Task<List<SysMessage>> ImportedEventsAsync(MonitoredServer server)
    {
        await using var importer = await SysClient.ConnectAsync(server.ClientPort, "b", "b");
        await importer.SendAsync("SUB sysev.$SYS.ACCOUNT.A.> 1\r\n");
        await importer.SyncAsync();
        await using (var a = await SysClient.ConnectAsync(server.ClientPort, "a", "a", ",\"name\":\"app\""))
        {
            await a.SyncAsync();
        }
        var messages = new List<SysMessage>();
        for (var i = 0; i < 4; i++)
        {
            messages.Add(await importer.ReadMessageAsync());
        }
        return messages;
    }
}
