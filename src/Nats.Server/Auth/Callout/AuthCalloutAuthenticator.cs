using Nats.Server.Clients;
using Nats.Server.Hosting;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// Go's deferred auth-callout step of processClientOrLeafAuthentication in server configuration mode:
/// users named in auth_users are authenticated by the configuration alone; every other client is decided
/// by the callout service, whatever the configuration says about its credentials. A refusal is also
/// reported in the callout account ($SYS.ACCOUNT.CLIENT.AUTH.ERR), and whoever lands in that account may
/// not publish authorization requests.
/// </summary>
internal sealed class AuthCalloutAuthenticator : IClientAuthenticator
{
    private readonly IClientAuthenticator _inner;
    private readonly AuthCallout _callout;
    private readonly AuthCalloutOptions _options;
    private readonly NatsServer _server;

    public AuthCalloutAuthenticator(IClientAuthenticator inner, AuthCallout callout, AuthCalloutOptions options, NatsServer server)
    {
        _inner = inner;
        _callout = callout;
        _options = options;
        _server = server;
    }

    public bool AuthRequired => true;

    public bool AdvertiseAuthRequired => true;

    public bool NonceRequired => _inner.NonceRequired;

    public AuthenticatedUser? Authenticate(in ClientAuthRequest request)
    {
        var raw = AuthCallout.RawAuthUser(request.Connect);
        AuthenticatedUser? user;
        if (_options.AuthUsers.Contains(raw))
        {
            user = _inner.Authenticate(request);
        }
        else if (_server.FindAccount(_options.Account) is not { } account)
        {
            user = _callout.Fail($"No valid account \"{_options.Account}\" for auth callout request: account missing");
        }
        else
        {
            user = _callout.Authorize(request, CalloutScope.ForServerConfig(account, _options), raw);
        }
        if (user is null)
        {
            if (request.Client is ClientConnection client && _server.FindAccount(_options.Account) is { } callout)
            {
                _server.SystemEvents?.AccountAuthenticationFailed(client, callout);
            }
            return null;
        }
        return user.Account == _options.Account ? CalloutDeny.Apply(user) : user;
    }
}
