namespace Nats.Server.Protocol;

internal enum CommandKind : byte
{
    Pub,
    HPub,
    Sub,
    Unsub,
    Ping,
    Pong,
    Connect,
    Info,
    Ok,
    Err,
}

/// <summary>
/// What went wrong while parsing, and therefore how the connection reacts (mirrors the Go parser:
/// some errors answer -ERR and close, some close silently).
/// </summary>
internal enum ParseError : byte
{
    None,
    /// <summary>-ERR 'Unknown Protocol Operation', then close.</summary>
    UnknownOperation,
    /// <summary>-ERR 'maximum control line exceeded', then close.</summary>
    MaxControlLine,
    /// <summary>-ERR 'Maximum Payload Violation', then close.</summary>
    MaxPayload,
    /// <summary>-ERR 'Authorization Violation', then close (an operation before CONNECT when auth is required).</summary>
    AuthorizationViolation,
    /// <summary>Malformed arguments (wrong count, bad size): the Go server closes without an -ERR.</summary>
    ProtocolViolation,
}

internal enum ParseStatus : byte
{
    Complete,
    NeedMoreData,
    Error,
}

/// <summary>
/// One parsed client command. Ranges index into the buffer that was parsed, so nothing is copied;
/// a zero-length range means the optional part is absent.
/// </summary>
internal struct ClientCommand
{
    public CommandKind Kind;
    public Range Subject;
    public Range Reply;
    public Range Queue;
    public Range Sid;
    /// <summary>The JSON of CONNECT/INFO or the text of -ERR.</summary>
    public Range Argument;
    /// <summary>Header block length for HPUB, -1 for PUB.</summary>
    public int HeaderSize;
    public int PayloadStart;
    /// <summary>Total message size (headers + body).</summary>
    public int PayloadSize;
    /// <summary>The size arguments as the client wrote them; Go copies these bytes into MSG (so "003" stays "003").</summary>
    public Range SizeToken;
    public Range HeaderSizeToken;
    /// <summary>UNSUB's max argument; -1 when absent, and -1 too when not a number (Go's parseSize).</summary>
    public long UnsubMax;
    public bool UnsubHasMax;
    /// <summary>The control line after the verb, for tracing.</summary>
    public Range ControlArgs;

    public readonly bool HasReply => Reply.End.Value > Reply.Start.Value;
    public readonly bool HasQueue => Queue.End.Value > Queue.Start.Value;
}
