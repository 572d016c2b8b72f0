using Nats.Server.Accounts;
using Nats.Server.Mappings;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's buildInternalAccount/UpdateAccountClaims for the parts an <see cref="AccountOptions"/> holds:
/// limits, default permissions and mappings.
/// </summary>
internal static class AccountFromClaims
{
    public static AccountOptions Options(AccountClaims claims)
    {
        var limits = claims.Nats.Limits;
        return new AccountOptions(claims.Subject)
        {
            Nkey = claims.Subject,
            Limits = new AccountLimits(Clamp(limits.Conn), Clamp(limits.Subs), Clamp(limits.Payload), Clamp(limits.LeafNodeConn)),
            DefaultPermissions = Permissions(claims.Nats.DefaultPermissions?.Pub, claims.Nats.DefaultPermissions?.Sub, claims.Nats.DefaultPermissions?.Resp),
            Mappings = [.. (claims.Nats.Mappings ?? []).Select(m => new SubjectMapping(m.Key,
                [.. m.Value.Select(d => new MappingDestination(d.Subject, d.Weight == 0 ? 100 : d.Weight, d.Cluster ?? ""))]))],
        };
    }

    /// <summary>Go's buildPermissionsFromJwt / buildInternalNkeyUser: only the lists that are present count.</summary>
    public static Permissions? Permissions(JwtPermission? pub, JwtPermission? sub, JwtResponsePermission? resp)
    {
        Permissions? p = null;
        if (pub is { IsEmpty: false })
        {
            p = new Permissions { Publish = new SubjectPermission { Allow = pub.Allow, Deny = pub.Deny } };
        }
        if (sub is { IsEmpty: false })
        {
            p ??= new Permissions();
            p.Subscribe = new SubjectPermission { Allow = sub.Allow, Deny = sub.Deny };
        }
        if (resp is not null)
        {
            p ??= new Permissions();
            p.Response = new ResponsePermission { MaxMsgs = resp.MaxMsgs, Expires = TimeSpan.FromTicks(resp.ExpiresNanos / 100) };
        }
        return p;
    }

    /// <summary>JWT limits are int64; the server's are int, truncated as Go's int32 conversion does.</summary>
    private static int Clamp(long value) => unchecked((int)value);
}
