namespace Nats.Server.Mqtt;

/// <summary>Hands each packet of an MQTT connection to its handler; false ends the read loop (DISCONNECT).</summary>
internal sealed class MqttPacketDispatcher(MqttConnection connection, MqttConnectHandler connect, MqttPublishHandler publish, MqttSubscribeHandler subscribe)
{
    public bool Dispatch(byte header, ReadOnlySpan<byte> body)
    {
        var type = (byte)(header & MqttPackets.TypeMask);
        var v5 = connection.V5;
        switch (type)
        {
            case MqttPackets.Publish:
                publish.HandlePublish((byte)(header & 0x0f), body);
                return true;
            case MqttPackets.PubAck:
                MqttV5Disconnect.CheckAck(body, v5);
                var session = connection.Session!;
                if (session.Delivery.PubAck(new MqttReader(body).ReadUInt16("packet identifier")) is { } acked)
                {
                    session.Delivery.Ack(acked);
                }
                return true;
            case MqttPackets.Subscribe:
                subscribe.HandleSubscribe(header, body);
                return true;
            case MqttPackets.Unsubscribe:
                subscribe.HandleUnsubscribe(header, body);
                return true;
            case MqttPackets.PingReq:
                connection.Outbound.Enqueue([MqttPackets.PingResp, 0]);
                return true;
            case MqttPackets.Connect:
                connect.Handle(body);
                return true;
            case MqttPackets.Disconnect:
                // [MQTT-3.1.2-8]: a normal disconnect discards the will; MQTT 5's 0x04 keeps it.
                connection.WillDiscarded = v5 is null || MqttV5Disconnect.Read(body, v5);
                return false;
            case MqttV5Disconnect.Auth when v5 is not null:
                throw new MqttProtocolException("AUTH without an authentication method in CONNECT", reason: MqttReasonCodes.ProtocolError);
            case MqttPackets.PubRec:
                MqttV5Disconnect.CheckAck(body, v5);
                publish.HandlePubRec(new MqttReader(body).ReadUInt16("packet identifier"));
                return true;
            case MqttPackets.PubRel:
                MqttV5Disconnect.CheckAck(body, v5);
                publish.HandlePubRel(body);
                return true;
            case MqttPackets.PubComp:
                MqttV5Disconnect.CheckAck(body, v5);
                if (connection.Session!.Delivery.PubComp(new MqttReader(body).ReadUInt16("packet identifier")) is { } completed)
                {
                    connection.Session.Delivery.Ack(completed);
                }
                return true;
            default:
                throw new MqttProtocolException($"received unknown packet type {type >> 4}");
        }
    }
}
