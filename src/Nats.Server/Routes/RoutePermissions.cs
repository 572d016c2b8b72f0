using Nats.Server.Auth;
using Nats.Subjects;

namespace Nats.Server.Routes;

/// <summary>
/// The cluster's <c>permissions {import, export}</c> (Go's RoutePermissions). They shape interest only, as in Go:
/// import decides which local interest we announce to peers (so which subjects they send us), export which of a
/// peer's RS+ we accept (so which subjects we send it). Go checks them as a user's publish (import) and subscribe
/// (export) permissions, which is how they are compiled here.
/// </summary>
internal sealed class RoutePermissions
{
    private readonly CompiledPermissions _compiled;

    public RoutePermissions(SubjectPermission? import, SubjectPermission? export)
    {
        Import = import;
        Export = export;
        _compiled = new CompiledPermissions(new Permissions { Publish = import, Subscribe = export });
    }

    public SubjectPermission? Import { get; }

    public SubjectPermission? Export { get; }

    /// <summary>Go's canImport (pubAllowed): whether we send RS+ for <paramref name="subject"/>.</summary>
    public bool CanImport(string subject)
    {
        if (_compiled.PublishAllow is { } allow && !allow.MatchesPlain(subject))
        {
            return false;
        }
        return _compiled.PublishDeny is not { } deny || !deny.MatchesPlain(subject);
    }

    /// <summary>Go's canExport (canSubscribe without a queue): whether a peer's RS+ for <paramref name="subject"/> is kept.</summary>
    public bool CanExport(string subject)
    {
        if (_compiled.SubscribeAllow is { } allow)
        {
            allow.Match(subject, out var plain, out _);
            if (!plain)
            {
                return false;
            }
        }
        if (_compiled.SubscribeDeny is { } deny)
        {
            deny.Match(subject, out var plain, out _);
            return !plain;
        }
        return true;
    }

    /// <summary>
    /// Whether a kept wildcard interest is wider than an export deny entry, so the denied subjects must be filtered out
    /// of what the route is sent (Go's mperms, switched on by canSubscribe).
    /// </summary>
    public bool NeedsDeliveryFilter(string subject) =>
        _compiled.DeliveryDeny is not null && SubjectRules.HasWildcard(subject)
        && _compiled.SubscribeDenyRaw.Any(denied => SubjectRules.IsSubsetMatch(denied, subject));

    /// <summary>Whether a message on <paramref name="subject"/> is held back from a route whose delivery filter is on.</summary>
    public bool DeliveryDenied(ReadOnlySpan<byte> subject) => _compiled.DeliveryDeny is { } deny && deny.MatchesPlain(subject);

    /// <summary>For reload: Go's DeepEqual of the two lists of each kind.</summary>
    public static string Identity(RoutePermissions? p) =>
        p is null ? "" : $"{List(p.Import?.Allow)}/{List(p.Import?.Deny)}/{List(p.Export?.Allow)}/{List(p.Export?.Deny)}";

    /// <summary>The INFO's <c>import</c>/<c>export</c> objects (null when unset, as Go's omitempty pointer).</summary>
    public static Protocol.PeerSubjectPermission? ToInfo(SubjectPermission? p) =>
        p is null ? null : new Protocol.PeerSubjectPermission
        {
            Allow = p.Allow is { Count: > 0 } allow ? [.. allow] : null,
            Deny = p.Deny is { Count: > 0 } deny ? [.. deny] : null,
        };

    private static string List(List<string>? items) => items is null ? "-" : string.Join("\u0001", items);
}
