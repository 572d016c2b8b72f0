namespace Nats.Server.Configuration;

/// <summary>An <c>authorization {}</c> block of a server-to-server listener (cluster, gateway, leafnodes), as bound.</summary>
internal sealed class PeerAuthorization
{
    public string? User { get; set; }
    public string? Password { get; set; }

    /// <summary>The auth timeout; Go's default of 2 s when the block gives none (or zero).</summary>
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>A cluster block's deprecated <c>authorization { permissions }</c> (Go's defaultPermissions).</summary>
    public Auth.Permissions? Permissions { get; set; }
}

/// <summary>
/// Go's parseAuthorization as parseCluster and parseGateway use it, and parseLeafAuthorization: one pass over the
/// block with the keys all three share (user/username, pass/password, timeout), the keys of one kind through
/// <c>more</c>, and Go's texts for what a route or gateway listener refuses.
/// </summary>
internal static class PeerAuthorizationBinder
{
    /// <summary>A cluster or gateway block: one user at most, no token; permissions are kept for the cluster to apply.</summary>
    /// <param name="kind">"Cluster" or "Gateway", as Go's errors name it.</param>
    public static PeerAuthorization BindSingleUser(string kind, ConfigValue v, List<string> errors)
    {
        string? token = null;
        var users = false;
        Auth.Permissions? permissions = null;
        var auth = Bind(v, errors, (key, item) =>
        {
            switch (key)
            {
                case "token":
                    token = item.String();
                    return true;
                case "users":
                    users = true;
                    return true;
                case "permissions":
                case "default_permission":
                case "default_permissions":
                    var parseErrors = new List<string>();
                    permissions = Auth.AuthConfigBinder.ParsePermissions(item.ToPlain(), parseErrors);
                    errors.AddRange(parseErrors.Select(e => $"{item.Source}: {e}"));
                    return true;
                default:
                    return false;
            }
        });
        if (users)
        {
            errors.Add($"{v.Source}: {kind} authorization does not allow multiple users");
            return new PeerAuthorization();
        }
        if (!string.IsNullOrEmpty(token))
        {
            errors.Add($"{v.Source}: {kind} authorization does not support tokens");
            return new PeerAuthorization();
        }
        auth.Permissions = permissions;
        return auth;
    }

    /// <param name="more">The keys only this kind has; false for an unknown key.</param>
    public static PeerAuthorization Bind(ConfigValue v, List<string> errors, ConfigBlock.KeyBinder more)
    {
        var auth = new PeerAuthorization();
        ConfigBlock.ForEach(v.Map(), errors, (key, item) =>
        {
            switch (key)
            {
                case "user":
                case "username":
                    auth.User = item.String();
                    return true;
                case "pass":
                case "password":
                    auth.Password = item.String();
                    return true;
                case "timeout":
                    // Go: a timeout that is not a number counts as 1 s.
                    var seconds = item.Value switch { long l => l, double d => d, _ => 1 };
                    auth.Timeout = TimeSpan.FromSeconds(seconds > 0 ? seconds : 2);
                    return true;
                default:
                    return more(key, item);
            }
        });
        return auth;
    }
}
