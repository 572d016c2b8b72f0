namespace Nats.Server.Protocol;

/// <summary>
/// Every client-facing -ERR line, byte for byte as the Go server sends it (server/client.go, errors.go).
/// One place so the texts cannot drift apart.
/// </summary>
internal static class ErrorTexts
{
    public static ReadOnlySpan<byte> UnknownProtocolOperation => "-ERR 'Unknown Protocol Operation'\r\n"u8;
    public static ReadOnlySpan<byte> MaxPayloadViolation => "-ERR 'Maximum Payload Violation'\r\n"u8;
    public static ReadOnlySpan<byte> MaxControlLineExceeded => "-ERR 'maximum control line exceeded'\r\n"u8;
    public static ReadOnlySpan<byte> InvalidPublishSubject => "-ERR 'Invalid Publish Subject'\r\n"u8;
    public static ReadOnlySpan<byte> InvalidSubject => "-ERR 'Invalid Subject'\r\n"u8;
    public static ReadOnlySpan<byte> AuthorizationViolation => "-ERR 'Authorization Violation'\r\n"u8;
    public static ReadOnlySpan<byte> AuthenticationTimeout => "-ERR 'Authentication Timeout'\r\n"u8;
    public static ReadOnlySpan<byte> StaleConnection => "-ERR 'Stale Connection'\r\n"u8;
    public static ReadOnlySpan<byte> MaxConnectionsExceeded => "-ERR 'maximum connections exceeded'\r\n"u8;
    public static ReadOnlySpan<byte> MaxSubscriptionsExceeded => "-ERR 'maximum subscriptions exceeded'\r\n"u8;
    public static ReadOnlySpan<byte> NoRespondersRequiresHeaders => "-ERR 'no responders requires headers support'\r\n"u8;
    public static ReadOnlySpan<byte> InvalidClientProtocol => "-ERR 'invalid client protocol'\r\n"u8;

    public static string PermissionsPublish(string subject) => $"-ERR 'Permissions Violation for Publish to \"{subject}\"'\r\n";
    public static string PermissionsPublishReply(string reply) => $"-ERR 'Permissions Violation for Publish with Reply of \"{reply}\"'\r\n";
}
