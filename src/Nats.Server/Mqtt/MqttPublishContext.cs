using Nats.Server.Subscriptions;

namespace Nats.Server.Mqtt;

/// <summary>
/// What an MQTT publisher knows about the message it is fanning out (QoS, retain flag), visible to
/// the MQTT receivers that run on its thread during the same synchronous fan-out, as Go's QoS 0
/// callback reads the publishing client's packet flags. NATS publishers leave it unset. The receivers
/// note here which shared subscription members the NATS queue draw gave a QoS 1/2 message to, so that the
/// stored copy goes out through those members' consumer and no other (<see cref="MqttLivePublisher"/>).
/// </summary>
internal static class MqttPublishContext
{
    [ThreadStatic]
    private static bool t_active;

    [ThreadStatic]
    private static byte t_qos;

    [ThreadStatic]
    private static bool t_retain;

    [ThreadStatic]
    private static Subscription?[]? t_picked;

    [ThreadStatic]
    private static int t_pickedCount;

    public static bool TryGet(out byte qos, out bool retain)
    {
        qos = t_qos;
        retain = t_retain;
        return t_active;
    }

    public static Scope Enter(byte qos, bool retain)
    {
        t_active = true;
        t_qos = qos;
        t_retain = retain;
        t_pickedCount = 0;
        return default;
    }

    /// <summary>The queue draw of this fan-out chose <paramref name="member"/>, a QoS 1/2 shared subscription whose consumer delivers the message.</summary>
    public static void NotePicked(Subscription member)
    {
        if (!t_active)
        {
            return;
        }
        var picked = t_picked ??= new Subscription?[4];
        if (t_pickedCount == picked.Length)
        {
            Array.Resize(ref t_picked, picked.Length * 2);
            picked = t_picked;
        }
        picked[t_pickedCount++] = member;
    }

    /// <summary>The members <see cref="NotePicked"/> recorded during the last fan-out on this thread.</summary>
    public static ReadOnlySpan<Subscription?> Picked => t_picked.AsSpan(0, t_pickedCount);

    public readonly struct Scope : IDisposable
    {
        public void Dispose()
        {
            t_active = false;
        }
    }
}
