using Microsoft.Extensions.Logging;
using Nats.Server.Auth;
using Nats.Server.Hosting;

namespace Nats.Server.Mqtt;

/// <summary>
/// CONNECT (Go's mqttProcessConnect): the level, the parse, authentication with the MQTT connection
/// type (allowed_connection_types sees MQTT or MQTT_WS), the session bind (takeover, flapping jail),
/// then CONNACK, which for MQTT 5 carries what the server chose.
/// </summary>
internal sealed class MqttConnectHandler(MqttConnection connection, MqttServer owner, NatsServer server, ILogger logger)
{
    public void Handle(ReadOnlySpan<byte> body)
    {
        if (connection.Connect is not null)
        {
            throw new MqttProtocolException("received a second CONNECT packet");
        }
        // The level decides how a refusal is answered, so it is known before the rest is parsed.
        connection.Level = body.Length > 6 && body[..6].SequenceEqual("\0\u0004MQTT"u8) ? body[6] : (byte)4;
        var connect = MqttConnect.Parse(body, MqttServer.NewClientId);
        var user = owner.Authenticate(connect, connection.RemoteIp, connection.IsWebSocket ? ConnectionTypes.MqttWebsocket : ConnectionTypes.Mqtt);
        if (user is null)
        {
            logger.LogError("{Connection} - authentication error", connection);
            throw new ConnectionRefused();
        }
        var (session, present) = owner.BindSession(connection, connect, user);
        var storeAcks = new MqttStoreAcks(session.Nats, session.Account, owner.JetStream.Origin, connection.Id, connection.Outbound, connection.OnStoreFailed);
        MqttV5Link? v5 = null;
        if (connect.IsV5)
        {
            v5 = new MqttV5Link(connect, owner.Options.EffectiveReceiveMaximum, (uint)(server.Options.MaxPayload + 65536 + 4 + 5 + 65536));
            storeAcks.Link = v5;
        }
        // MQTT 5 Server Keep Alive: max_keep_alive caps a client asking for none or for longer.
        var maxKeepAlive = owner.Options.MaxKeepAlive;
        var serverKeepAlive = v5 is not null && maxKeepAlive > 0 && (connect.KeepAlive == 0 || connect.KeepAlive > maxKeepAlive) ? maxKeepAlive : (ushort)0;
        connection.Bind(connect, user, session, storeAcks, v5, serverKeepAlive > 0 ? MqttConnect.DeadlineFor(serverKeepAlive) : connect.ReadDeadline);
        if (v5 is not null)
        {
            connection.Outbound.Enqueue(MqttV5Packets.ConnAck(present, MqttReasonCodes.Success, connect, connect.AssignedClientId ? connect.ClientId : null,
                v5.ReceiveMaximum, v5.MaximumPacketSize, serverKeepAlive, connect.RequestResponseInfo ? ResponseTopicPrefix(session) : null));
        }
        else
        {
            connection.Outbound.Enqueue([MqttPackets.ConnAck, 2, present ? (byte)1 : (byte)0, MqttPackets.RcAccepted]);
        }
        session.Attach(connection);
        logger.LogDebug("{Connection} - Client connected", connection);
    }

    /// <summary>
    /// MQTT 5 Response Information: a topic prefix only this session's client is told of, under NATS's inbox
    /// convention (MQTT "_INBOX/mqtt/&lt;id hash&gt;/" is NATS "_INBOX.mqtt.&lt;id hash&gt;."), so NATS requesters and
    /// responders treat it as the inbox it is.
    /// </summary>
    public static string ResponseTopicPrefix(MqttSession session) => "_INBOX/mqtt/" + session.IdHash + "/";

    /// <summary>An authentication failure: CONNACK 5 (MQTT 5: 0x87) is queued and the connection closes.</summary>
    internal sealed class ConnectionRefused() : MqttProtocolException("authentication error", MqttPackets.RcNotAuthorized);
}
