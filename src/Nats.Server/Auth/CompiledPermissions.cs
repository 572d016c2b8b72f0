namespace Nats.Server.Auth;

/// <summary>
/// A user's permissions compiled once at server start and shared by all of that user's connections
/// (per-connection caches live in <see cref="ClientPermissions"/>). Mirrors setPermissions in Go's client.go.
/// </summary>
internal sealed class CompiledPermissions
{
    public CompiledPermissions(Permissions permissions)
    {
        Source = permissions;
        if (permissions.Publish is { } pub)
        {
            // A present but empty allow list denies everything (allow_responses relies on that).
            PublishAllow = pub.Allow is null ? null : SubjectPatterns.Compile(pub.Allow, allowQueues: false);
            PublishDeny = pub.Deny is { Count: > 0 } ? SubjectPatterns.Compile(pub.Deny, allowQueues: false) : null;
        }
        if (permissions.Subscribe is { } sub)
        {
            SubscribeAllow = sub.Allow is { Count: > 0 } ? SubjectPatterns.Compile(sub.Allow, allowQueues: true) : null;
            if (sub.Deny is { Count: > 0 })
            {
                SubscribeDeny = SubjectPatterns.Compile(sub.Deny, allowQueues: true);
                SubscribeDenyRaw = [.. sub.Deny];
                // Delivery-time filter: Go inserts the raw deny strings, so "subject queue" entries never match a message.
                DeliveryDeny = SubjectPatterns.Compile(sub.Deny, allowQueues: false);
            }
        }
        Response = permissions.Response;
    }

    /// <summary>What was compiled, for merging more rules in later (Go's mergeDenyPermissions).</summary>
    public Permissions Source { get; }

    public SubjectPatterns? PublishAllow { get; }
    public SubjectPatterns? PublishDeny { get; }
    public SubjectPatterns? SubscribeAllow { get; }
    public SubjectPatterns? SubscribeDeny { get; }
    public string[] SubscribeDenyRaw { get; } = [];
    public SubjectPatterns? DeliveryDeny { get; }
    public ResponsePermission? Response { get; }

    public bool HasPublishRules => PublishAllow is not null || PublishDeny is not null;

    /// <summary>Go's validateResponsePermissions: a response permission implies "deny all other publishes" unless allow is set.</summary>
    public static Permissions Normalize(Permissions source)
    {
        var p = source.Clone();
        if (p.Response is { } response)
        {
            p.Publish ??= new SubjectPermission();
            p.Publish.Allow ??= [];
            if (response.MaxMsgs == 0)
            {
                response.MaxMsgs = ResponsePermission.DefaultMaxMsgs;
            }
            if (response.Expires == TimeSpan.Zero)
            {
                response.Expires = ResponsePermission.DefaultExpires;
            }
        }
        return p;
    }
}
