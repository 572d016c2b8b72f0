using Nats.Server.Configuration;

namespace Nats.Server.Auth.Jwt;

/// <summary>Go's validateTrustedOperators, run with the other option checks before a server starts.</summary>
internal static class OperatorValidation
{
    public static string? Validate(ServerOptions options)
    {
        var op = options.Operator;
        if (op.TrustedOperators.Count == 0)
        {
            return null;
        }
        if (op.Resolver is null)
        {
            return "operators require an account resolver to be configured";
        }
        if (options.Accounts.Count > 0)
        {
            return "operators do not allow Accounts to be configured directly";
        }
        if (options.Users is { Count: > 0 } || options.Nkeys is { Count: > 0 })
        {
            return "operators do not allow users to be configured directly";
        }
        if (op.TrustedKeys is { Count: > 0 })
        {
            return "conflicting options for 'TrustedKeys' and 'TrustedOperators'";
        }
        if (!string.IsNullOrEmpty(options.SystemAccount))
        {
            var named = op.TrustedOperators.Where(o => !string.IsNullOrEmpty(o.Nats.SystemAccount)).ToList();
            if (named.Count > 0 && !named.Any(o => o.Nats.SystemAccount == options.SystemAccount))
            {
                return "system_account in config and operator JWT must be identical";
            }
        }
        else if (string.IsNullOrEmpty(op.TrustedOperators[0].Nats.SystemAccount) && op.Resolver.IsDirectory)
        {
            return "using nats based account resolver - the system account needs to be specified in configuration or the operator jwt";
        }
        if (AssertServerVersion(op) is { } versionError)
        {
            return versionError;
        }
        foreach (var key in TrustedKeys(op))
        {
            if (!NKeys.IsValidPublicOperatorKey(key))
            {
                return $"trusted Keys {GoQuote.Quote(key)} are required to be a valid public operator nkey";
            }
        }
        foreach (var pinned in op.PinnedAccounts ?? [])
        {
            if (!NKeys.IsValidPublicAccountKey(pinned))
            {
                return $"pinned account key {GoQuote.Quote(pinned)} is not a valid public account nkey";
            }
        }
        return null;
    }

    /// <summary>trusted_keys plus every operator's key (unless it insists on signing keys) and signing keys.</summary>
    public static List<string> TrustedKeys(OperatorOptions op)
    {
        var keys = new List<string>(op.TrustedKeys ?? []);
        foreach (var claims in op.TrustedOperators)
        {
            if (!claims.Nats.StrictSigningKeyUsage)
            {
                keys.Add(claims.Subject);
            }
            keys.AddRange(claims.Nats.SigningKeys ?? []);
        }
        return keys;
    }

    private static string? AssertServerVersion(OperatorOptions op)
    {
        var server = ParseVersion(ServerVersion.ProtocolVersion)!.Value;
        foreach (var claims in op.TrustedOperators)
        {
            var asserted = claims.Nats.AssertServerVersion ?? "";
            if (ParseVersion(asserted) is not { } wanted)
            {
                return $"operator {claims.Subject} expects version {asserted} got error instead: bad version";
            }
            if (wanted.Major > server.Major)
            {
                return $"operator {claims.Subject} expected major version {wanted.Major} > server major version {server.Major}";
            }
            if (server.Major > wanted.Major)
            {
                continue;
            }
            if (wanted.Minor > server.Minor)
            {
                return $"operator {claims.Subject} expected minor version {wanted.Minor} > server minor version {server.Minor}";
            }
            if (server.Minor > wanted.Minor)
            {
                continue;
            }
            if (wanted.Update > server.Update)
            {
                return $"operator {claims.Subject} expected update version {wanted.Update} > server update version {server.Update}";
            }
        }
        return null;
    }

    /// <summary>jwt.ParseServerVersion: "" is 0.0.0, else "major.minor.update".</summary>
    private static (int Major, int Minor, int Update)? ParseVersion(string version)
    {
        if (version == "")
        {
            return (0, 0, 0);
        }
        var parts = version.Split('.');
        if (parts.Length != 3 || !int.TryParse(parts[0], out var major) || !int.TryParse(parts[1], out var minor) || !int.TryParse(parts[2], out var update))
        {
            return null;
        }
        return (major, minor, update);
    }
}
