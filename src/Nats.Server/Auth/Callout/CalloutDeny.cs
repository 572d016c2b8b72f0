namespace Nats.Server.Auth.Callout;

/// <summary>
/// Go's mergeDenyPermissions(pub, $SYS.REQ.USER.AUTH): any client bound to the callout account, the
/// service's own auth users included, may not publish authorization requests of its own.
/// </summary>
internal static class CalloutDeny
{
    public static AuthenticatedUser Apply(AuthenticatedUser user)
    {
        var source = user.Permissions?.Source;
        if (source?.Publish?.Deny?.Contains(AuthCallout.Subject) == true)
        {
            return user;
        }
        var merged = new Permissions
        {
            Publish = new SubjectPermission { Allow = source?.Publish?.Allow, Deny = [.. source?.Publish?.Deny ?? [], AuthCallout.Subject] },
            Subscribe = source?.Subscribe,
            Response = source?.Response,
        };
        return user.WithPermissions(new CompiledPermissions(merged));
    }
}
