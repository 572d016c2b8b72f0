using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Subscriptions;

namespace Nats.Server.Monitoring;

/// <summary>Builds the monitoring view of a connection or subscription (ConnInfo.fill / newSubDetail in Go).</summary>
internal static class ConnectionSnapshot
{
    public static ConnInfo Capture(ClientConnection client, DateTime now)
    {
        var last = client.LastActivity;
        return new ConnInfo
        {
            Cid = client.Id,
            Ip = client.RemoteIp,
            Port = client.RemotePort,
            Start = client.StartTime,
            LastActivity = last,
            Rtt = GoFormat.Rtt(client.Rtt),
            Uptime = GoFormat.Uptime(now - client.StartTime),
            Idle = GoFormat.Uptime(now - last),
            PendingBytes = client.PendingBytes,
            InMsgs = Volatile.Read(ref client.InMsgs),
            OutMsgs = client.OutMsgs,
            InBytes = Volatile.Read(ref client.InBytes),
            OutBytes = client.OutBytes,
            Subscriptions = client.SubscriptionCount,
            Name = NullIfEmpty(client.Name),
            Lang = NullIfEmpty(client.Lang),
            Version = NullIfEmpty(client.Version),
            TlsVersion = client.TlsState?.Version,
            TlsCipherSuite = client.TlsState?.CipherSuite,
        };
    }

    /// <summary>The record kept in the closed ring: figures as of the close, plus the subscriptions it held.</summary>
    public static ClosedConnection CaptureClosed(ClientConnection client)
    {
        var stop = client.StopTime ?? DateTime.UtcNow;
        var info = Capture(client, stop);
        info.Stop = stop;
        info.Reason = client.ClosedReason.ToText();
        var held = client.SubscriptionsAtClose;
        info.Subscriptions = held.Count;
        var details = new SubDetail[held.Count];
        for (var i = 0; i < details.Length; i++)
        {
            details[i] = Detail(held[i], client.Account.Name);
        }
        return new ClosedConnection(info, details, client.RawAuthUser, client.Account.Name, client.ClosedReason);
    }

    public static SubDetail Detail(Subscription subscription, string? account) => new()
    {
        Account = account,
        Subject = subscription.SubjectString,
        Queue = subscription.QueueString,
        Sid = subscription.SidString,
        Msgs = Volatile.Read(ref subscription.Delivered),
        Max = Volatile.Read(ref subscription.Max),
        Cid = subscription.Client is { } client ? client.Id : 0,
    };

    /// <summary>Account names are only shown for accounts other than the global one, as in Go.</summary>
    public static string? VisibleAccount(string account) => account == Account.GlobalAccountName ? null : account;

    private static string? NullIfEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}

/// <summary>A connection as it was when it closed.</summary>
internal sealed record ClosedConnection(ConnInfo Info, SubDetail[] Subscriptions, string? User, string Account, ClosedReason Reason);
