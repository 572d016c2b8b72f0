using System.Text;
using Nats.Server.Gateways;
using Nats.Server.Hosting;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Protocol;

/// <summary>The INFO and CONNECT lines each connection kind writes, byte for byte (Go's field order and omitempty rules).</summary>
public sealed class PeerJsonPinTests
{
    private static string Text(byte[] line) => Encoding.UTF8.GetString(line);

    [Fact]
    public void ClientInfoWithEveryField()
    {
        var info = new ClientInfoLine(new ServerInfo
        {
            ServerId = "NID",
            ServerName = "srv",
            Version = "2.9.10",
            Proto = 1,
            Go = "dotnet10.0.0",
            Host = "0.0.0.0",
            Port = 4222,
            Headers = true,
            AuthRequired = true,
            TlsRequired = true,
            TlsAvailable = true,
            TlsVerify = true,
            MaxPayload = 1048576,
            JetStream = true,
            Domain = "hub",
            ConnectUrls = ["a:1", "b:2"],
            LameDuckMode = true,
        });
        Assert.Equal(
            "INFO {\"server_id\":\"NID\",\"server_name\":\"srv\",\"version\":\"2.9.10\",\"proto\":1,\"go\":\"dotnet10.0.0\",\"host\":\"0.0.0.0\"," +
            "\"port\":4222,\"headers\":true,\"auth_required\":true,\"tls_required\":true,\"tls_verify\":true,\"tls_available\":true," +
            "\"max_payload\":1048576,\"jetstream\":true,\"client_id\":7,\"client_ip\":\"127.0.0.1\",\"nonce\":\"n<&>\",\"domain\":\"hub\"," +
            "\"connect_urls\":[\"a:1\",\"b:2\"],\"ldm\":true} \r\n",
            Text(info.RenderForClient(7, "127.0.0.1", "n<&>")));
        Assert.Equal(
            "INFO {\"server_id\":\"NID\",\"server_name\":\"srv\",\"version\":\"2.9.10\",\"proto\":1,\"go\":\"dotnet10.0.0\",\"host\":\"0.0.0.0\"," +
            "\"port\":4222,\"headers\":true,\"auth_required\":true,\"tls_required\":true,\"tls_verify\":true,\"tls_available\":true," +
            "\"max_payload\":512,\"jetstream\":true,\"client_id\":18446744073709551615,\"client_ip\":\"::1\",\"domain\":\"hub\"," +
            "\"connect_urls\":[\"a:1\",\"b:2\"],\"ldm\":true} \r\n",
            Text(info.RenderForClient(ulong.MaxValue, "::1", null, 512)));
    }

    [Fact]
    public void ClientInfoOmitsEmptyFields()
    {
        var info = new ClientInfoLine(new ServerInfo
        {
            ServerId = "NID",
            ServerName = "srv",
            Version = "2.9.10",
            Proto = 1,
            Go = "dotnet",
            Host = "0.0.0.0",
            Port = 4222,
            ConnectUrls = [],
            Domain = "",
        });
        Assert.Equal(
            "INFO {\"server_id\":\"NID\",\"server_name\":\"srv\",\"version\":\"2.9.10\",\"proto\":1,\"go\":\"dotnet\",\"host\":\"0.0.0.0\"," +
            "\"port\":4222,\"headers\":false,\"max_payload\":0} \r\n",
            Text(info.RenderForClient(0, null)));
    }

    [Fact]
    public void ClientInfoEscapesWhatJsonMust()
    {
        // A value the cached cut cannot copy as is takes the full render, as Go's json.Marshal escapes it.
        var line = new ClientInfoLine(new ServerInfo { ServerId = "N", Proto = 1, MaxPayload = 9 });
        Assert.Equal(
            "INFO {\"server_id\":\"N\",\"server_name\":\"\",\"version\":\"\",\"proto\":1,\"go\":\"\",\"host\":\"\",\"port\":0," +
            "\"headers\":false,\"max_payload\":9,\"client_id\":3,\"nonce\":\"a\\\"b\"} \r\n",
            Text(line.RenderForClient(3, "", "a\"b")));
        Assert.Equal(Text(line.RenderForClient(3, "10.0.0.1", "n")), Text(new ServerInfo
        {
            ServerId = "N",
            Proto = 1,
            MaxPayload = 9,
            ClientId = 3,
            ClientIp = "10.0.0.1",
            Nonce = "n",
        }.Render()));
    }

    [Fact]
    public void RouteInfoWithEveryField()
    {
        var info = new ServerInfo
        {
            ServerId = "S",
            ServerName = "n",
            Version = "v",
            Proto = 2,
            Go = "g",
            Host = "h",
            Port = 1,
            Headers = true,
            AuthRequired = true,
            TlsRequired = true,
            TlsVerify = true,
            MaxPayload = 2,
            JetStream = true,
            Ip = "nats-route://h:1/",
            Nonce = "x",
            Cluster = "c",
            Dynamic = true,
            Domain = "d",
            ConnectUrls = ["a:1"],
            WsConnectUrls = ["w:1"],
            LameDuckMode = true,
            Lnoc = true,
            GatewayUrl = "gw:1",
            LeafNodeUrls = ["l:1"],
        };
        Assert.Equal(
            "INFO {\"server_id\":\"S\",\"server_name\":\"n\",\"version\":\"v\",\"proto\":2,\"go\":\"g\",\"host\":\"h\",\"port\":1,\"headers\":true," +
            "\"auth_required\":true,\"tls_required\":true,\"tls_verify\":true,\"max_payload\":2,\"jetstream\":true,\"ip\":\"nats-route://h:1/\"," +
            "\"nonce\":\"x\",\"cluster\":\"c\",\"cluster_dynamic\":true,\"domain\":\"d\",\"connect_urls\":[\"a:1\"],\"ws_connect_urls\":[\"w:1\"]," +
            "\"ldm\":true,\"lnoc\":true,\"gateway_url\":\"gw:1\",\"leafnode_urls\":[\"l:1\"]} \r\n",
            Text(info.Render()));
    }

    [Fact]
    public void RouteInfoOmitsEmptyFields()
    {
        var info = new ServerInfo { ServerId = "S", Proto = 2, ConnectUrls = [], Ip = "" };
        Assert.Equal(
            "INFO {\"server_id\":\"S\",\"server_name\":\"\",\"version\":\"\",\"proto\":2,\"go\":\"\",\"host\":\"\",\"port\":0,\"headers\":false," +
            "\"max_payload\":0} \r\n",
            Text(info.Render()));
    }

    [Fact]
    public void RouteInfoIsReadAsGoWritesIt()
    {
        var json = "{\"server_id\":\"S\",\"server_name\":\"n\",\"version\":\"2.9.10\",\"proto\":1,\"git_commit\":\"abc\",\"go\":\"go1.19\"," +
            "\"host\":\"0.0.0.0\",\"port\":6222,\"headers\":true,\"auth_required\":true,\"tls_required\":true,\"max_payload\":1048576," +
            "\"jetstream\":true,\"ip\":\"nats-route://1.2.3.4:6222/\",\"nonce\":\"x\",\"cluster\":\"c\",\"cluster_dynamic\":true," +
            "\"connect_urls\":[\"a:1\",\"b:2\"],\"ldm\":true,\"import\":{\"allow\":[\"x\"]},\"lnoc\":true,\"gateway\":\"G\"," +
            "\"gateway_urls\":[\"g:1\"],\"gateway_url\":\"g:1\",\"gateway_cmd\":1,\"leafnode_urls\":[\"l:1\"],\"unknown\":[1,{}]}";
        var info = ServerInfo.Parse(Encoding.UTF8.GetBytes(json))!;
        Assert.Equal(("S", "n", "2.9.10", 1, "go1.19", "0.0.0.0", 6222), (info.ServerId, info.ServerName, info.Version, info.Proto, info.Go, info.Host, info.Port));
        Assert.True(info.Headers && info.AuthRequired && info.TlsRequired && info.JetStream && info.Dynamic && info.LameDuckMode && info.Lnoc);
        Assert.Equal((1048576, "nats-route://1.2.3.4:6222/", "x", "c"), (info.MaxPayload, info.Ip, info.Nonce, info.Cluster));
        Assert.Equal(["a:1", "b:2"], info.ConnectUrls!);
        Assert.Equal(("G", "g:1", 1), (info.Gateway, info.GatewayUrl, info.GatewayCmd));
        Assert.Equal(["g:1"], info.GatewayUrls!);
        Assert.Equal(["l:1"], info.LeafNodeUrls!);
        Assert.Null(ServerInfo.Parse("[1]"u8));
        Assert.Null(ServerInfo.Parse("{\"server_id\""u8));
    }

    [Fact]
    public void LeafInfoWithEveryField()
    {
        var info = new ServerInfo
        {
            ServerId = "S",
            ServerName = "n",
            Version = "v",
            Proto = 1,
            AuthRequired = true,
            InfoOnConnect = true,
            Go = "g",
            Host = "h",
            Port = 1,
            Headers = true,
            MaxPayload = 2,
            JetStream = true,
            Ip = "h:1",
            ClientId = 5,
            Nonce = "x",
            Cluster = "c",
            Domain = "d",
            ConnectInfo = true,
            LeafNodeUrls = ["h:1"],
            RemoteAccount = "A",
        };
        Assert.Equal(
            "INFO {\"server_id\":\"S\",\"server_name\":\"n\",\"version\":\"v\",\"proto\":1,\"go\":\"g\",\"host\":\"h\",\"port\":1,\"headers\":true," +
            "\"auth_required\":true,\"max_payload\":2,\"jetstream\":true,\"ip\":\"h:1\",\"client_id\":5,\"nonce\":\"x\",\"cluster\":\"c\"," +
            "\"domain\":\"d\",\"info_on_connect\":true,\"connect_info\":true,\"leafnode_urls\":[\"h:1\"],\"remote_account\":\"A\"} \r\n",
            Text(info.Render()));
    }

    [Fact]
    public void LeafInfoOmitsEmptyFields()
    {
        Assert.Equal(
            "INFO {\"server_id\":\"\",\"server_name\":\"\",\"version\":\"\",\"proto\":1,\"go\":\"\",\"host\":\"\",\"port\":0,\"headers\":false," +
            "\"auth_required\":true,\"max_payload\":0,\"info_on_connect\":true} \r\n",
            Text(new ServerInfo { Proto = 1, AuthRequired = true, InfoOnConnect = true }.Render()));
    }

    [Fact]
    public void LeafInfoIsReadAsGoWritesIt()
    {
        var json = "{\"server_id\":\"S\",\"server_name\":\"n\",\"version\":\"2.9.10\",\"proto\":1,\"go\":\"go1.19\",\"host\":\"h\",\"port\":7422," +
            "\"headers\":true,\"auth_required\":true,\"max_payload\":1024,\"jetstream\":true,\"client_id\":9,\"nonce\":\"x\",\"cluster\":\"c\"," +
            "\"domain\":\"d\",\"info_on_connect\":true,\"connect_info\":true,\"leafnode_urls\":[\"h:7422\"],\"remote_account\":\"A\"}";
        var info = ServerInfo.Parse(Encoding.UTF8.GetBytes(json))!;
        Assert.Equal(("S", "n", "2.9.10", 1024, 9UL, "x", "c", "d", "A"),
            (info.ServerId, info.ServerName, info.Version, info.MaxPayload, info.ClientId, info.Nonce, info.Cluster, info.Domain, info.RemoteAccount));
        Assert.True(info.Headers && info.JetStream && info.InfoOnConnect && info.ConnectInfo);
        Assert.Null(info.Gateway);
        Assert.Equal(["h:7422"], info.LeafNodeUrls!);
        Assert.Equal("G", ServerInfo.Parse("{\"gateway\":\"G\"}"u8)!.Gateway);
    }

    [Fact]
    public void GatewayInfoWithEveryField()
    {
        var info = new ServerInfo
        {
            ServerId = "S",
            ServerName = "n",
            Version = "v",
            Host = "h",
            Port = 1,
            Headers = true,
            AuthRequired = true,
            MaxPayload = 2,
            Gateway = "A",
            GatewayUrls = ["u:1"],
            GatewayUrl = "u:1",
            GatewayCmd = GatewayCommand.AllSubsStart,
            GatewayCmdPayload = "acc"u8.ToArray(),
            GatewayNrp = true,
            GatewayIom = true,
        };
        Assert.Equal(
            "INFO {\"server_id\":\"S\",\"server_name\":\"n\",\"version\":\"v\",\"proto\":0,\"go\":\"\",\"host\":\"h\",\"port\":1,\"headers\":true," +
            "\"auth_required\":true,\"max_payload\":2,\"gateway\":\"A\",\"gateway_urls\":[\"u:1\"],\"gateway_url\":\"u:1\",\"gateway_cmd\":2," +
            "\"gateway_cmd_payload\":\"YWNj\",\"gateway_nrp\":true,\"gateway_iom\":true}\r\n",
            Text(info.Render(spaceBeforeCrLf: false)));
    }

    [Fact]
    public void GatewayCommandOmitsEmptyFields()
    {
        var info = new ServerInfo { Gateway = "A", GatewayCmd = GatewayCommand.AllSubsComplete, GatewayCmdPayload = "$G"u8.ToArray(), GatewayUrls = [] };
        Assert.Equal(
            "INFO {\"server_id\":\"\",\"server_name\":\"\",\"version\":\"\",\"proto\":0,\"go\":\"\",\"host\":\"\",\"port\":0,\"headers\":false," +
            "\"max_payload\":0,\"gateway\":\"A\",\"gateway_cmd\":3,\"gateway_cmd_payload\":\"JEc=\"}\r\n",
            Text(info.Render(spaceBeforeCrLf: false)));
    }

    [Fact]
    public void GatewayInfoIsReadAsGoWritesIt()
    {
        var json = "{\"server_id\":\"S\",\"server_name\":\"n\",\"version\":\"2.9.10\",\"proto\":1,\"go\":\"go1.19\",\"host\":\"h\",\"port\":7222," +
            "\"headers\":true,\"auth_required\":true,\"max_payload\":1024,\"gateway\":\"B\",\"gateway_urls\":[\"h:7222\"],\"gateway_url\":\"h:7222\"," +
            "\"gateway_cmd\":2,\"gateway_cmd_payload\":\"JEc=\",\"gateway_nrp\":true,\"gateway_iom\":true}";
        var info = ServerInfo.Parse(Encoding.UTF8.GetBytes(json))!;
        Assert.Equal(("S", "n", "h", 7222, "B", "h:7222"), (info.ServerId, info.ServerName, info.Host, info.Port, info.Gateway, info.GatewayUrl));
        Assert.True(info.Headers && info.AuthRequired && info.GatewayNrp && info.GatewayIom);
        Assert.Equal((GatewayCommand.AllSubsStart, "$G"), (info.GatewayCmd, Encoding.UTF8.GetString(info.GatewayCmdPayload!)));
        Assert.Equal(["h:7222"], info.GatewayUrls!);
    }

    [Fact]
    public void RouteConnectWithEveryField()
    {
        var connect = new PeerConnect
        {
            Echo = true,
            User = "u",
            Pass = "p",
            TlsRequired = true,
            Headers = true,
            Name = "S",
            Cluster = "c",
            Dynamic = true,
            Lnoc = true,
        };
        Assert.Equal(
            "CONNECT {\"echo\":true,\"verbose\":false,\"pedantic\":false,\"user\":\"u\",\"pass\":\"p\",\"tls_required\":true,\"headers\":true," +
            "\"name\":\"S\",\"cluster\":\"c\",\"cluster_dynamic\":true,\"lnoc\":true}\r\n",
            Text(connect.RenderRoute()));
    }

    [Fact]
    public void GatewayConnectOmitsEmptyFields()
    {
        var connect = new PeerConnect { Echo = false, User = "", Name = "S", Cluster = "", Gateway = "G" };
        Assert.Equal(
            "CONNECT {\"echo\":false,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"headers\":false,\"name\":\"S\",\"cluster\":\"\"," +
            "\"gateway\":\"G\"}\r\n",
            Text(connect.RenderRoute()));
    }

    [Fact]
    public void RouteConnectIsReadAsGoWritesIt()
    {
        var json = "{\"echo\":true,\"verbose\":false,\"pedantic\":false,\"user\":\"u\",\"pass\":\"p\",\"tls_required\":true,\"headers\":true," +
            "\"name\":\"S\",\"cluster\":\"c\",\"cluster_dynamic\":true,\"lnoc\":true,\"gateway\":\"G\",\"lang\":\"go\"}";
        var connect = PeerConnect.Parse(Encoding.UTF8.GetBytes(json))!;
        Assert.Equal(("u", "p", "S", "c", "G", "go"), (connect.User, connect.Pass, connect.Name, connect.Cluster, connect.Gateway, connect.Lang));
        Assert.True(connect.TlsRequired && connect.Headers && connect.Dynamic && connect.Lnoc);
        Assert.Null(PeerConnect.Parse("\"x\""u8));
    }

    [Fact]
    public void LeafConnectWithEveryField()
    {
        var connect = new PeerConnect
        {
            Version = "v",
            Jwt = "j",
            Sig = "s",
            User = "u",
            Pass = "p",
            ServerId = "S",
            Domain = "d",
            Name = "n",
            Hub = true,
            Cluster = "c",
            Headers = true,
            JetStream = true,
            DenyPub = ["x.>"],
        };
        Assert.Equal(
            "CONNECT {\"version\":\"v\",\"jwt\":\"j\",\"sig\":\"s\",\"user\":\"u\",\"pass\":\"p\",\"tls_required\":false,\"server_id\":\"S\"," +
            "\"domain\":\"d\",\"name\":\"n\",\"is_hub\":true,\"cluster\":\"c\",\"headers\":true,\"jetstream\":true,\"deny_pub\":[\"x.>\"]}\r\n",
            Text(connect.RenderLeaf()));
    }

    [Fact]
    public void LeafConnectOmitsEmptyFields()
    {
        var connect = new PeerConnect { Version = "v", DenyPub = [] };
        Assert.Equal("CONNECT {\"version\":\"v\",\"tls_required\":false}\r\n", Text(connect.RenderLeaf()));
    }

    [Fact]
    public void LeafConnectIsReadAsGoWritesIt()
    {
        var json = "{\"version\":\"2.9.10\",\"user\":\"u\",\"pass\":\"p\",\"auth_token\":\"t\",\"tls_required\":false,\"server_id\":\"S\"," +
            "\"domain\":\"d\",\"name\":\"n\",\"is_hub\":true,\"cluster\":\"c\",\"headers\":true,\"jetstream\":true,\"deny_pub\":[\"a\",\"b\"]}";
        var connect = PeerConnect.Parse(Encoding.UTF8.GetBytes(json))!;
        Assert.Equal(("2.9.10", "u", "p", "t", "S", "d", "n", "c"),
            (connect.Version, connect.User, connect.Pass, connect.Token, connect.ServerId, connect.Domain, connect.Name, connect.Cluster));
        Assert.True(connect.Hub && connect.Headers && connect.JetStream);
        Assert.Equal(["a", "b"], connect.DenyPub!);
    }
}
