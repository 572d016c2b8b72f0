namespace Nats.Server.Mqtt;

/// <summary>MQTT 5 reason codes (specification 2.4) the server sends or reads.</summary>
internal static class MqttReasonCodes
{
    public const byte Success = 0x00;
    public const byte GrantedQos1 = 0x01;
    public const byte GrantedQos2 = 0x02;
    public const byte DisconnectWithWill = 0x04;
    public const byte NoMatchingSubscribers = 0x10;
    public const byte NoSubscriptionExisted = 0x11;
    public const byte UnspecifiedError = 0x80;
    public const byte MalformedPacket = 0x81;
    public const byte ProtocolError = 0x82;
    public const byte ImplementationSpecificError = 0x83;
    public const byte UnsupportedProtocolVersion = 0x84;
    public const byte ClientIdentifierNotValid = 0x85;
    public const byte BadUserNameOrPassword = 0x86;
    public const byte NotAuthorized = 0x87;
    public const byte ServerUnavailable = 0x88;
    public const byte ServerShuttingDown = 0x8B;
    public const byte BadAuthenticationMethod = 0x8C;
    public const byte KeepAliveTimeout = 0x8D;
    public const byte SessionTakenOver = 0x8E;
    public const byte TopicFilterInvalid = 0x8F;
    public const byte TopicNameInvalid = 0x90;
    public const byte PacketIdentifierNotFound = 0x92;
    public const byte ReceiveMaximumExceeded = 0x93;
    public const byte TopicAliasInvalid = 0x94;
    public const byte PacketTooLarge = 0x95;
    public const byte QuotaExceeded = 0x97;
    public const byte PayloadFormatInvalid = 0x99;
    public const byte SharedSubscriptionsNotSupported = 0x9E;
    public const byte SubscriptionIdentifiersNotSupported = 0xA1;
    public const byte WildcardSubscriptionsNotSupported = 0xA2;

    /// <summary>The MQTT 5 CONNACK code for a 3.1.1 CONNACK return code (the CONNECT refusals share one code path).</summary>
    public static byte FromConnAck311(byte code) => code switch
    {
        MqttPackets.RcUnacceptableProtocol => UnsupportedProtocolVersion,
        MqttPackets.RcIdentifierRejected => ClientIdentifierNotValid,
        MqttPackets.RcServerUnavailable => ServerUnavailable,
        MqttPackets.RcBadUserOrPassword => BadUserNameOrPassword,
        MqttPackets.RcNotAuthorized => NotAuthorized,
        _ => UnspecifiedError,
    };
}
