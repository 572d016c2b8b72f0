using Nats.Server.Auth.Jwt;
using Nats.Server.Clients;
using Nats.Server.Hosting;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// Operator mode's auth callout (nats-server 2.10): the user JWT is checked as always; when its account
/// JWT has an <c>authorization</c> block, a user not among its auth_users (typically a bearer "sentinel"
/// shared by all clients) is decided by the account's callout service instead, which may place it in the
/// account itself or one of its allowed_accounts. Users bound to the callout account may not publish
/// authorization requests; refusals are reported in that account ($SYS.ACCOUNT.CLIENT.AUTH.ERR).
/// </summary>
internal sealed class AccountCalloutAuthenticator : IClientAuthenticator
{
    private readonly JwtAuthenticator _inner;
    private readonly AuthCallout _callout;
    private readonly NatsServer _server;

    public AccountCalloutAuthenticator(JwtAuthenticator inner, AuthCallout callout, NatsServer server)
    {
        _inner = inner;
        _callout = callout;
        _server = server;
    }

    public bool AuthRequired => _inner.AuthRequired;

    public bool AdvertiseAuthRequired => _inner.AdvertiseAuthRequired;

    public bool NonceRequired => _inner.NonceRequired;

    public AuthenticatedUser? Authenticate(in ClientAuthRequest request)
    {
        // A user JWT refused before its account was bound leaves Go's client in $G, where its callout
        // goes unanswered until the auth timeout; it is refused at once here.
        if (_inner.Authenticate(request) is not { } user)
        {
            return null;
        }
        if (_server.FindAccount(user.Account) is not { Jwt.ExternalAuth: { } external } account)
        {
            return user;
        }
        var raw = RawAuthUser(request.Connect, user);
        if (external.IsAuthUser(raw))
        {
            return CalloutDeny.Apply(user);
        }
        if (_callout.Authorize(request, CalloutScope.ForAccount(account, external), raw) is { } admitted)
        {
            return admitted;
        }
        if (request.Client is ClientConnection client)
        {
            _server.SystemEvents?.AccountAuthenticationFailed(client, account);
        }
        return null;
    }

    /// <summary>Go's getRawAuthUser for a JWT user: nkey, user name, then the user's public key.</summary>
    private static string RawAuthUser(Protocol.ConnectOptions connect, AuthenticatedUser user) =>
        !string.IsNullOrEmpty(connect.Nkey) ? connect.Nkey
        : !string.IsNullOrEmpty(connect.User) ? connect.User
        : user.Name ?? "";
}
