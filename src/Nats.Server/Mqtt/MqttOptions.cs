namespace Nats.Server.Mqtt;

/// <summary>The <c>mqtt {}</c> block (Go's MQTTOpts). Port 0 means MQTT is off, as in Go.</summary>
public sealed class MqttOptions
{
    public const int DefaultMaxAckPending = 1024;

    public static readonly TimeSpan DefaultAckWait = TimeSpan.FromSeconds(30);

    public string Host { get; set; } = "0.0.0.0";

    /// <summary>0: off; -1: any free port.</summary>
    public int Port { get; set; }

    public bool Enabled => Port != 0;

    /// <summary>The <c>tls {}</c> block: MQTT clients then handshake TLS first, as Go requires.</summary>
    public Tls.TlsServerContext? TlsContext { get; set; }

    public bool TlsConfigured => TlsContext is not null;

    public string? Username { get; set; }
    public string? Password { get; set; }
    public string? Token { get; set; }
    public TimeSpan AuthTimeout { get; set; }
    public string? NoAuthUser { get; set; }
    public TimeSpan AckWait { get; set; }
    public int MaxAckPending { get; set; }
    public string? JsDomain { get; set; }
    public int StreamReplicas { get; set; }
    public int ConsumerReplicas { get; set; }
    public bool ConsumerMemoryStorage { get; set; }
    public TimeSpan ConsumerInactiveThreshold { get; set; }

    /// <summary>An MQTT-only username or token replaces the server's authentication for MQTT clients (Go's authOverride).</summary>
    public bool AuthOverride => !string.IsNullOrEmpty(Username) || !string.IsNullOrEmpty(Token);

    public TimeSpan EffectiveAckWait => AckWait > TimeSpan.Zero ? AckWait : DefaultAckWait;

    /// <summary>MQTT 5 Receive Maximum in CONNACK (ours; <c>receive_maximum</c>): QoS 1/2 PUBLISHes a client may have in flight.</summary>
    internal ushort ReceiveMaximum { get; set; }

    /// <summary>
    /// MQTT 5 (ours; <c>max_keep_alive</c>, seconds): an MQTT 5 client asking for no keep-alive or a longer one is
    /// given this one as Server Keep Alive in CONNACK, and the connection is held to it. 0: the client's value stands.
    /// </summary>
    internal ushort MaxKeepAlive { get; set; }

    internal ushort EffectiveReceiveMaximum => ReceiveMaximum > 0 ? ReceiveMaximum : ushort.MaxValue;

    public int EffectiveMaxAckPending => MaxAckPending > 0 ? MaxAckPending : DefaultMaxAckPending;
}
