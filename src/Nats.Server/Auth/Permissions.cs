namespace Nats.Server.Auth;

/// <summary>
/// What a user may publish and subscribe to (Go's Permissions in auth.go). A null list means
/// "no restriction of that kind"; an empty Publish.Allow list means "nothing" (allow_responses sets it).
/// </summary>
public sealed class Permissions
{
    public SubjectPermission? Publish { get; set; }
    public SubjectPermission? Subscribe { get; set; }

    /// <summary>allow_responses: may publish to reply subjects of messages it received.</summary>
    public ResponsePermission? Response { get; set; }

    public Permissions Clone() => new()
    {
        Publish = Publish?.Clone(),
        Subscribe = Subscribe?.Clone(),
        Response = Response is null ? null : new ResponsePermission { MaxMsgs = Response.MaxMsgs, Expires = Response.Expires },
    };
}

/// <summary>Allow and deny lists of subjects (wildcards allowed; subscribe entries may be "subject queue").</summary>
public sealed class SubjectPermission
{
    public List<string>? Allow { get; set; }
    public List<string>? Deny { get; set; }

    public SubjectPermission Clone() => new()
    {
        Allow = Allow is null ? null : [.. Allow],
        Deny = Deny is null ? null : [.. Deny],
    };
}

/// <summary>
/// How many responses (MaxMsgs) and for how long (Expires) a reply subject stays publishable once a
/// request carrying it was delivered. Zero means the Go default; negative means unlimited.
/// </summary>
public sealed class ResponsePermission
{
    public const int DefaultMaxMsgs = 1;
    public static readonly TimeSpan DefaultExpires = TimeSpan.FromMinutes(2);

    public int MaxMsgs { get; set; } = DefaultMaxMsgs;
    public TimeSpan Expires { get; set; } = DefaultExpires;
}
