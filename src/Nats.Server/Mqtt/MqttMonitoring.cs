using Nats.Server.Clients;
using Nats.Server.Monitoring;

namespace Nats.Server.Mqtt;

/// <summary>An MQTT connection as /connz shows it: Go's ConnInfo with type "mqtt" and mqtt_client.</summary>
internal static class MqttMonitoring
{
    public static ConnInfo Capture(MqttConnection connection, DateTime now, bool auth)
    {
        var last = connection.LastActivity;
        var info = new ConnInfo
        {
            Cid = connection.Id,
            Type = "mqtt",
            Rtt = "0s",
            Ip = connection.RemoteIp,
            Port = connection.RemotePort,
            Start = connection.Start,
            LastActivity = last,
            Uptime = GoFormat.Uptime(now - connection.Start),
            Idle = GoFormat.Uptime(now - last),
            InMsgs = Interlocked.Read(ref connection.InMsgs),
            OutMsgs = connection.OutMsgs,
            InBytes = Interlocked.Read(ref connection.InBytes),
            OutBytes = connection.OutBytes,
            PendingBytes = connection.IsClosed ? 0 : connection.PendingBytes,
            TlsVersion = connection.TlsState?.Version,
            TlsCipherSuite = connection.TlsState?.CipherSuite,
            Subscriptions = connection.SubscriptionCount,
            MqttClient = connection.ClientId.Length > 0 ? connection.ClientId : null,
        };
        if (auth)
        {
            info.AuthorizedUser = connection.User;
            info.Account = ConnectionSnapshot.VisibleAccount(connection.AccountName);
        }
        return info;
    }

    /// <summary>The record the closed ring keeps: made without the auth fields, as Go's closed records are.</summary>
    public static ClosedConnection CaptureClosed(MqttConnection connection, DateTime stop)
    {
        var info = Capture(connection, stop, auth: false);
        info.Stop = stop;
        info.Reason = connection.ClosedReason.ToText();
        return new ClosedConnection(info, [], connection.User, connection.AccountName, connection.ClosedReason);
    }
}
