using System.Text;
using Nats.Server.Accounts;
using Nats.Server.Auth.Jwt;
using Nats.Server.Hosting;
using NATS.NKeys;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// Go's decodeResponse and processReply: the authorization response JWT (decrypted first when it is not a
/// JWT and requests are sealed) must be signed by an account key, valid, for the user nkey and server the
/// request named, and carry no error; in operator mode an unencrypted response must come from the callout
/// account or one of its signing keys. The user JWT inside must be valid, for that user, inside its connect
/// times, and issued by the expected issuer (operator mode: the callout account, or an account its
/// allowed_accounts list, by that account's key or signing key). Server configuration mode places the
/// client in the account the user JWT's audience names, operator mode in the issuing account. Error texts
/// are Go's (title-cased as Go sends them to the log).
/// </summary>
internal static class AuthCalloutResponse
{
    public readonly record struct Outcome(AuthenticatedUser? User, string? Error, bool OutsideConnectTimes = false);

    public static Outcome Process(byte[] body, CalloutScope scope, string userNkey, NatsServer server, KeyPair? xkey, in ClientAuthRequest request)
    {
        var account = scope.Account;
        if (body.Length == 0)
        {
            return Failed($"auth callout violation: \"no reason supplied\" on account \"{account.Name}\"");
        }
        var encrypted = false;
        if (xkey is not null && !body.AsSpan().StartsWith("eyJ"u8))
        {
            try
            {
                body = xkey.Open(body, scope.XKey!);
                encrypted = true;
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
        // Go skips this check for a sealed response: only the holder of the xkey could have written it.
        if (scope.OperatorMode && !encrypted)
        {
            var signer = issuerAccount.Length > 0 ? issuerAccount : response.Issuer;
            if (signer != account.Name && !(account.Jwt?.HasIssuer(signer, out _) ?? false))
            {
                return Failed("auth callout signing key is unknown");
            }
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
        return Admit(user, scope, userNkey, server, request);
    }

    /// <summary>processReply after the response: the user JWT decides account, permissions and expiry.</summary>
    private static Outcome Admit(UserClaims user, CalloutScope scope, string userNkey, NatsServer server, in ClientAuthRequest request)
    {
        var account = scope.Account;
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
        // Go's getIssuerAccount.
        var jwtIssuer = user.Issuer;
        if (!string.IsNullOrEmpty(user.Nats.IssuerAccount))
        {
            if (!scope.OperatorMode)
            {
                return new Outcome(null, $"Error non operator mode account \"{account.Name}\": attempted to use issuer_account");
            }
            jwtIssuer = user.Nats.IssuerAccount;
        }
        if (jwtIssuer != scope.Issuer)
        {
            if (!scope.OperatorMode)
            {
                return new Outcome(null, $"Wrong issuer for auth callout response on account \"{account.Name}\", expected \"{scope.Issuer}\" got \"{jwtIssuer}\"");
            }
            if (!scope.External!.IsAllowedAccount(jwtIssuer))
            {
                return new Outcome(null, $"Account \"{user.Issuer}\" not permitted as valid account option for auth callout for account \"{account.Name}\"");
            }
        }
        // Outside operator mode the user JWT's audience places the client; in operator mode its issuing account does.
        var placement = scope.OperatorMode ? jwtIssuer : user.Audience ?? "";
        if (server.LookupAccount(placement, out var lookupError) is not { } target)
        {
            return new Outcome(null, $"No valid account \"{placement}\" for auth callout response on account \"{account.Name}\": {lookupError}");
        }
        var pub = user.Nats.Pub;
        var sub = user.Nats.Sub;
        if (scope.OperatorMode)
        {
            if (target.Jwt is not { } targetJwt || !targetJwt.HasIssuer(user.Issuer, out var signingScope))
            {
                return new Outcome(null, $"User JWT issuer \"{user.Issuer}\" is not known");
            }
            if (signingScope is not null)
            {
                if (!user.Nats.HasEmptyPermissions)
                {
                    return new Outcome(null, "User JWT is not valid: scoped users require no permissions or limits set");
                }
                if (PermissionTemplates.Apply(signingScope.Template, user, targetJwt.Claims) is not { } templated)
                {
                    return new Outcome(null, "User JWT generated invalid permissions");
                }
                (pub, sub) = templated;
            }
        }
        var permissions = AccountFromClaims.Permissions(pub, sub, user.Nats.Resp) ?? target.Options.DefaultPermissions;
        var name = string.IsNullOrEmpty(user.Name) ? null : user.Name;
        // Go clears the connection's JWT before registering the user, so the user JWT's subs and payload
        // limits do not apply (only the account's and the server's); its permissions and expiry do.
        var admitted = new AuthenticatedUser(name is null ? AuthMethod.Nkey : AuthMethod.UserPassword, name ?? user.Subject, target.Name,
            permissions is null ? null : new CompiledPermissions(CompiledPermissions.Normalize(permissions)))
        {
            ValidFor = ValidFor(user.Expires, now, windowLeft),
            CalloutName = name ?? "",
        };
        return new Outcome(ReferenceEquals(target, account) ? CalloutDeny.Apply(admitted) : admitted, null);
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
