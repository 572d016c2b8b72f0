namespace Nats.Server.Mqtt;

/// <summary>
/// What a closing connection does to its session (Go's mqttHandleClosedClient): the will goes out at once
/// unless DISCONNECT or a takeover discarded it (or MQTT 5 delays it), the session lets go of the
/// connection, a clean session ends, and an MQTT 5 session left behind is given its expiry and delayed will.
/// </summary>
internal sealed class MqttDeparture(MqttConnection connection, MqttServer owner, MqttPublishHandler publish)
{
    public void Leave()
    {
        if (connection.Session is not { } session)
        {
            return;
        }
        var will = connection.WillDiscarded ? null : connection.Connect?.Will;
        var v5 = connection.V5;
        if (will is not null && (will.Delay == 0 || session.Clean))
        {
            publish.PublishWill(session, will);
            session.FlushPublished();
            will = null;
        }
        if (!session.Detach(connection))
        {
            return;
        }
        if (session.Clean)
        {
            session.Clear();
            owner.RemoveSession(session);
        }
        else if (v5 is not null)
        {
            // Checked now: a delayed will may go out after a restart, with no connection left to check it against.
            owner.ScheduleExpiry(session, v5.SessionExpiry, will is not null && publish.MayPublish(will.Subject) ? will : null);
        }
    }
}
