using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Auth.Jwt;
using Nats.Server.Hosting;
using NATS.NKeys;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// Go's decodeResponse and processReply for server configuration mode: the authorization response JWT
/// (decrypted first when it is not a JWT and requests are sealed) must be signed by an account key,
/// valid, for the user nkey and server the request named, and carry no error; the user JWT inside must
/// be valid, for that user, issued by the configured issuer, inside its connect times, and name in its
/// audience the account the client is placed in. Error texts are Go's (title-cased as Go sends them to the log).
/// </summary>
internal static class AuthCalloutResponse
{
    public readonly record struct Outcome(AuthenticatedUser? User, string? Error, bool OutsideConnectTimes = false);

    public static Outcome Process(byte[] body, Account account, string userNkey, NatsServer server, AuthCalloutOptions options, KeyPair? xkey,
        in ClientAuthRequest request)
    {
        if (body.Length == 0)
        {
            return Failed($"auth callout violation: \"no reason supplied\" on account \"{account.Name}\"");
        }
        if (xkey is not null && !body.AsSpan().StartsWith("eyJ"u8))
        {
            try
            {
                body = xkey.Open(body, options.XKey!);
            }
            catch (Exception e) when (e is NKeysException or ArgumentException or InvalidOperationException)
            {
                return Failed($"error decrypting auth callout response on account \"{account.Name}\": {e.Message}");
            }
        }
        GenericClaims response;
        try
        {
            response = JwtDecoder.DecodeGeneric(Encoding.UTF8.GetString(body));
        }
        catch (JwtException e)
        {
            return Failed(e.Message);
        }
        if (response.NatsString("type") != "authorization_response")
        {
            return Failed("not an authorization response claim");
        }
        if (NKeys.PrefixOf(response.Issuer) != PrefixByte.Account)
        {
            return Failed("unable to validate expected prefixes - [account]");
        }
        var jwt = response.NatsString("jwt");
        var error = response.NatsString("error");
        var issuerAccount = response.NatsString("issuer_account");
        if (ResponseIssue(response, jwt, error, issuerAccount) is { } issue)
        {
            return Failed($"authorization response had validation errors: {issue}");
        }
        if (response.Subject != userNkey)
        {
            return Failed("auth callout violation: auth callout response is not for expected user");
        }
        if (response.Audience != server.ServerId)
        {
            return Failed("auth callout violation: auth callout response is not for server");
        }
        if (error.Length > 0)
        {
            return Failed($"auth callout service returned an error: {error}");
        }
        UserClaims user;
        try
        {
            user = JwtDecoder.DecodeUser(jwt);
        }
        catch (JwtException e)
        {
            return Failed(e.Message);
        }
        return Admit(user, account, userNkey, server, options, request);
    }

    /// <summary>processReply after the response: the user JWT decides account, permissions and expiry.</summary>
    private static Outcome Admit(UserClaims user, Account account, string userNkey, NatsServer server, AuthCalloutOptions options, in ClientAuthRequest request)
    {
        var now = JwtValidation.Now;
        var validation = new JwtValidation();
        user.Validate(validation, now);
        if (validation.Issues.Count > 0)
        {
            return new Outcome(null, $"Error validating user JWT: {validation.Issues[0].Description}");
        }
        if (user.Subject != userNkey)
        {
            return new Outcome(null, $"Expected authorized user of \"{userNkey}\" but got \"{user.Subject}\" on account \"{account.Name}\"");
        }
        if (!ConnectTimes.Allowed(user.Nats, DateTimeOffset.UtcNow, out var windowLeft))
        {
            return new Outcome(null, $"Authorized user on account \"{account.Name}\" outside of valid connect times", OutsideConnectTimes: true);
        }
        if (user.Nats.AllowedConnectionTypes is { Count: > 0 } types)
        {
            var known = types.Select(t => t.ToUpperInvariant()).Where(ConnectionTypes.IsKnown).ToList();
            if (known.Count == 0)
            {
                return new Outcome(null, $"Authorized user on account \"{account.Name}\" using invalid connection type");
            }
            if (!ConnectionTypes.Allows(known, request.ConnectionType))
            {
                return new Outcome(null, $"Authorized user on account \"{account.Name}\" using invalid connection type");
            }
        }
        if (!string.IsNullOrEmpty(user.Nats.IssuerAccount))
        {
            return new Outcome(null, $"Error non operator mode account \"{account.Name}\": attempted to use issuer_account");
        }
        if (user.Issuer != options.Issuer)
        {
            return new Outcome(null, $"Wrong issuer for auth callout response on account \"{account.Name}\", expected \"{options.Issuer}\" got \"{user.Issuer}\"");
        }
        // Outside operator mode the user JWT's audience places the client in an account.
        var placement = user.Audience ?? "";
        if (server.FindAccount(placement) is not { } target)
        {
            return new Outcome(null, $"No valid account \"{placement}\" for auth callout response on account \"{account.Name}\": account missing");
        }
        var permissions = AccountFromClaims.Permissions(user.Nats.Pub, user.Nats.Sub, user.Nats.Resp) ?? target.Options.DefaultPermissions;
        if (ReferenceEquals(target, account))
        {
            // Go's mergeDenyPermissions: a client admitted into the callout account may not publish requests of its own.
            permissions = DenyCalloutSubject(permissions);
        }
        var name = string.IsNullOrEmpty(user.Name) ? null : user.Name;
        return new Outcome(new AuthenticatedUser(name is null ? AuthMethod.Nkey : AuthMethod.UserPassword, name ?? user.Subject, target.Name,
            permissions is null ? null : new CompiledPermissions(CompiledPermissions.Normalize(permissions)))
        {
            ValidFor = ValidFor(user.Expires, now, windowLeft),
        }, null);
    }

    private static Permissions DenyCalloutSubject(Permissions? permissions)
    {
        var merged = new Permissions
        {
            Publish = new SubjectPermission { Allow = permissions?.Publish?.Allow, Deny = [.. permissions?.Publish?.Deny ?? []] },
            Subscribe = permissions?.Subscribe,
            Response = permissions?.Response,
        };
        if (!merged.Publish.Deny!.Contains(AuthCallout.Subject))
        {
            merged.Publish.Deny.Add(AuthCallout.Subject);
        }
        return merged;
    }

    private static TimeSpan? ValidFor(long expires, long now, TimeSpan? windowLeft)
    {
        if (expires == 0)
        {
            return windowLeft;
        }
        var untilExpiry = TimeSpan.FromSeconds(Math.Max(0, expires - now));
        return windowLeft is { } w && w < untilExpiry ? w : untilExpiry;
    }

    /// <summary>jwt's AuthorizationResponseClaims.Validate then ClaimsData.Validate: the first issue, or null.</summary>
    private static string? ResponseIssue(GenericClaims response, string jwt, string error, string issuerAccount)
    {
        if (!NKeys.IsValidPublicUserKey(response.Subject))
        {
            return "Subject must be a user public key";
        }
        if (NKeys.PrefixOf(response.Audience) != PrefixByte.Server)
        {
            return "Audience must be a server public key";
        }
        if (error.Length == 0 && jwt.Length == 0)
        {
            return "Error or Jwt is required";
        }
        if (error.Length > 0 && jwt.Length > 0)
        {
            return "Only Error or Jwt can be set";
        }
        if (issuerAccount.Length > 0 && !NKeys.IsValidPublicAccountKey(issuerAccount))
        {
            return "issuer_account is not an account public key";
        }
        var now = JwtValidation.Now;
        if (response.Expires > 0 && now > response.Expires)
        {
            return "claim is expired";
        }
        if (response.NotBefore > 0 && response.NotBefore > now)
        {
            return "claim is not yet valid";
        }
        return null;
    }

    /// <summary>Go title-cases the first letter of the error it logs.</summary>
    private static Outcome Failed(string error) => new(null, char.ToUpperInvariant(error[0]) + error[1..]);
}
