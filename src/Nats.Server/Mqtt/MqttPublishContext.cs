namespace Nats.Server.Mqtt;

/// <summary>
/// What an MQTT publisher knows about the message it is fanning out (QoS, retain flag), visible to
/// the MQTT receivers that run on its thread during the same synchronous fan-out, as Go's QoS 0
/// callback reads the publishing client's packet flags. NATS publishers leave it unset.
/// </summary>
internal static class MqttPublishContext
{
    [ThreadStatic]
    private static bool t_active;

    [ThreadStatic]
    private static byte t_qos;

    [ThreadStatic]
    private static bool t_retain;

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
        return default;
    }

    public readonly struct Scope : IDisposable
    {
        public void Dispose()
        {
            t_active = false;
        }
    }
}
