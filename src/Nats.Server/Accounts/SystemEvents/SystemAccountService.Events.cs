using System.Text;
using System.Text.Json;
using Nats.Server.Clients;
using Nats.Server.Monitoring;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// The advisories Go 2.9.10 publishes in the system account: client connect and disconnect (only for
/// clients outside $G), authentication failures, account connection counts and server statsz.
/// Client details are captured when the event happens and written on the loop.
/// </summary>
internal sealed partial class SystemAccountService
{
    private const string ConnectEventType = "io.nats.server.advisory.v1.client_connect";
    private const string DisconnectEventType = "io.nats.server.advisory.v1.client_disconnect";
    private const string AccountConnsEventType = "io.nats.server.advisory.v1.account_connections";

    /// <summary>A client joined <paramref name="account"/> (accept joins $G, CONNECT moves it): Go's addClient update.</summary>
    public void ClientJoinedAccount(Account account)
    {
        if (Running)
        {
            PostAccountConns(account);
        }
    }

    /// <summary>A client left <paramref name="account"/>; Go reports it for every account but $G.</summary>
    public void ClientLeftAccount(Account account)
    {
        if (Running && account.Name != Account.GlobalAccountName)
        {
            PostAccountConns(account);
        }
    }

    /// <summary>CONNECT succeeded (credentials checked, account bound): $SYS.ACCOUNT.&lt;acc&gt;.CONNECT.</summary>
    public void ClientConnected(ClientConnection client)
    {
        var account = client.Account;
        if (!Running || account.Name == Account.GlobalAccountName)
        {
            return;
        }
        var info = ClientEventInfo.Capture(client, DateTime.UtcNow, withStop: false);
        var id = _eventIds.Next();
        Post(() => Publish($"$SYS.ACCOUNT.{account.Name}.CONNECT", "", json =>
        {
            json.WriteStartObject();
            WriteTypedEvent(json, ConnectEventType, id, info.Timestamp);
            WriteServerInfo(json);
            info.Write(json);
            json.WriteEndObject();
        }));
    }

    /// <summary>A connection of an account other than $G closed: $SYS.ACCOUNT.&lt;acc&gt;.DISCONNECT with its totals and reason.</summary>
    public void ClientDisconnected(ClientConnection client)
    {
        var account = client.Account;
        if (!Running || account.Name == Account.GlobalAccountName)
        {
            return;
        }
        PostDisconnect($"$SYS.ACCOUNT.{account.Name}.DISCONNECT", client, client.ClosedReason.ToText());
    }

    /// <summary>Go's sendAuthErrorEvent: a disconnect-shaped event on $SYS.SERVER.&lt;id&gt;.CLIENT.AUTH.ERR.</summary>
    public void AuthenticationFailed(ClientConnection client)
    {
        if (Running)
        {
            PostDisconnect($"$SYS.SERVER.{_server.ServerId}.CLIENT.AUTH.ERR", client, ClosedReason.AuthenticationViolation.ToText());
        }
    }

    /// <summary>
    /// Go 2.10's sendAccountAuthErrorEvent, for auth callout refusals: the same event on
    /// $SYS.ACCOUNT.CLIENT.AUTH.ERR, published in <paramref name="account"/> (the callout account) for its owner.
    /// </summary>
    public void AccountAuthenticationFailed(ClientConnection client, Account account)
    {
        if (Running)
        {
            PostDisconnect("$SYS.ACCOUNT.CLIENT.AUTH.ERR", client, ClosedReason.AuthenticationViolation.ToText(), account);
        }
    }

    private void PostDisconnect(string subject, ClientConnection client, string reason, Account? account = null)
    {
        var info = ClientEventInfo.Capture(client, client.StopTime ?? DateTime.UtcNow, withStop: true, account?.Name);
        var id = _eventIds.Next();
        var sent = (Msgs: Volatile.Read(ref client.InMsgs), Bytes: Volatile.Read(ref client.InBytes));
        var received = (Msgs: client.OutMsgs, Bytes: client.OutBytes);
        Post(() => Publish(subject, "", json =>
        {
            json.WriteStartObject();
            WriteTypedEvent(json, DisconnectEventType, id, info.Timestamp);
            WriteServerInfo(json);
            info.Write(json);
            WriteDataStats(json, "sent", sent.Msgs, sent.Bytes);
            WriteDataStats(json, "received", received.Msgs, received.Bytes);
            json.WriteString("reason", reason);
            json.WriteEndObject();
        }, account));
    }

    /// <summary>
    /// Go's accConnsUpdate: the account's statz on the old and new subjects, then a heartbeat every
    /// 30 s while it has connections.
    /// </summary>
    private void PostAccountConns(Account account)
    {
        // Taken now, as Go takes a.statz() inside addClient/removeClient; the traffic totals (a walk
        // over the clients) only when someone listens, so a connect storm stays linear.
        var conns = account.ClientCount;
        string[] subjects = [$"$SYS.SERVER.ACCOUNT.{account.Name}.CONNS", $"$SYS.ACCOUNT.{account.Name}.SERVER.CONNS"];
        AccountStat? stat = null;
        if (subjects.Any(HasListeners))
        {
            stat = _documents.AccountStatFor(account);
            stat.Conns = conns;
            stat.TotalConns = conns;
        }
        var id = _eventIds.Next();
        var now = DateTime.UtcNow;
        Post(() =>
        {
            ScheduleConnsHeartbeat(account, conns);
            if (stat is null)
            {
                return;
            }
            foreach (var subject in subjects)
            {
                Publish(subject, "", json => WriteAccountConns(json, id, now, stat));
            }
        });
    }

    /// <summary>Whether anyone besides the server's own handlers would receive a message on <paramref name="subject"/>.</summary>
    private bool HasListeners(string subject)
    {
        var result = Account.SubList.Match(Encoding.UTF8.GetBytes(subject));
        return result.Plain.Any(IsListener) || result.QueueGroups.Any(g => g.Any(IsListener));

        // The server's own handlers do not count; clients, imports and peers' interest do.
        static bool IsListener(Subscriptions.Subscription s) => s.Kind != Delivery.ReceiverKind.Message;
    }

    private void WriteAccountConns(Utf8JsonWriter json, string id, DateTime now, AccountStat stat)
    {
        json.WriteStartObject();
        WriteTypedEvent(json, AccountConnsEventType, id, now);
        WriteServerInfo(json);
        WriteAccountStatFields(json, stat);
        json.WriteEndObject();
    }

    private void ScheduleConnsHeartbeat(Account account, int totalConns)
    {
        if (totalConns == 0)
        {
            if (_connsHeartbeats.Remove(account, out var old))
            {
                old.Dispose();
            }
            return;
        }
        if (_connsHeartbeats.TryGetValue(account, out var timer))
        {
            timer.Change(EventsHeartbeat, Timeout.InfiniteTimeSpan);
        }
        else
        {
            _connsHeartbeats[account] = new Timer(_ => PostAccountConns(account), null, EventsHeartbeat, Timeout.InfiniteTimeSpan);
        }
    }

    /// <summary>Go's ServerStatsMsg: {"server":{...},"statsz":{...}}.</summary>
    private void PublishStatsz(string subject)
    {
        var varz = _documents.Varz();
        var active = _server.Accounts.Count(a => a.ClientCount > 0 || a == Account);
        var jetStream = StatszJetStream.Capture(_server.JetStream);
        Publish(subject, "", json =>
        {
            json.WriteStartObject();
            WriteServerInfo(json);
            json.WriteStartObject("statsz");
            json.WriteString("start", GoFormat.Time(_server.StartTime));
            json.WriteNumber("mem", varz.Mem);
            json.WriteNumber("cores", varz.Cores);
            json.WriteNumber("cpu", varz.Cpu);
            json.WriteNumber("connections", varz.Connections);
            json.WriteNumber("total_connections", varz.TotalConnections);
            json.WriteNumber("active_accounts", active);
            json.WriteNumber("subscriptions", varz.Subscriptions);
            WriteDataStats(json, "sent", varz.OutMsgs, varz.OutBytes);
            WriteDataStats(json, "received", varz.InMsgs, varz.InBytes);
            json.WriteNumber("slow_consumers", varz.SlowConsumers);
            WriteRouteStats(json);
            json.WriteNumber("active_servers", 1 + (_remote?.Count ?? 0));
            jetStream?.Write(json);
            json.WriteEndObject();
            json.WriteEndObject();
        });
    }

    /// <summary>Go's statsz "routes" (RouteStat per route, left out when there are none).</summary>
    private void WriteRouteStats(Utf8JsonWriter json)
    {
        if (_server.Cluster is not { } cluster || cluster.Table.Registered is not { Length: > 0 } routes)
        {
            return;
        }
        json.WriteStartArray("routes");
        foreach (var route in routes)
        {
            json.WriteStartObject();
            json.WriteNumber("rid", route.Id);
            if (route.RemoteName.Length > 0)
            {
                json.WriteString("name", route.RemoteName);
            }
            WriteDataStats(json, "sent", Volatile.Read(ref route.Outbound.OutMsgs), Volatile.Read(ref route.Outbound.OutBytes));
            WriteDataStats(json, "received", Volatile.Read(ref route.Link.InMsgs), Volatile.Read(ref route.Link.InBytes));
            json.WriteNumber("pending", (int)Math.Min(route.Outbound.Pending, int.MaxValue));
            json.WriteEndObject();
        }
        json.WriteEndArray();
    }

    private static void WriteTypedEvent(Utf8JsonWriter json, string type, string id, DateTime time)
    {
        json.WriteString("type", type);
        json.WriteString("id", id);
        json.WriteString("timestamp", GoFormat.Time(time));
    }

    private static void WriteAccountStatFields(Utf8JsonWriter json, AccountStat stat)
    {
        json.WriteString("acc", stat.Account);
        json.WriteNumber("conns", stat.Conns);
        json.WriteNumber("leafnodes", stat.LeafNodes);
        json.WriteNumber("total_conns", stat.TotalConns);
        WriteDataStats(json, "sent", stat.Sent.Msgs, stat.Sent.Bytes);
        WriteDataStats(json, "received", stat.Received.Msgs, stat.Received.Bytes);
        json.WriteNumber("slow_consumers", stat.SlowConsumers);
    }

    private static void WriteDataStats(Utf8JsonWriter json, string name, long msgs, long bytes)
    {
        json.WriteStartObject(name);
        json.WriteNumber("msgs", msgs);
        json.WriteNumber("bytes", bytes);
        json.WriteEndObject();
    }
}
