namespace Nats.Server.Auth.Callout;

/// <summary>
/// Go's deferred auth-callout step of processClientOrLeafAuthentication: users named in auth_users are
/// authenticated by the configuration alone; every other client is decided by the callout service,
/// whatever the configuration says about its credentials.
/// </summary>
internal sealed class AuthCalloutAuthenticator : IClientAuthenticator
{
    private readonly IClientAuthenticator _inner;
    private readonly AuthCallout _callout;

    public AuthCalloutAuthenticator(IClientAuthenticator inner, AuthCallout callout)
    {
        _inner = inner;
        _callout = callout;
    }

    public bool AuthRequired => true;

    public bool AdvertiseAuthRequired => true;

    public bool NonceRequired => _inner.NonceRequired;

    public AuthenticatedUser? Authenticate(in ClientAuthRequest request)
    {
        var raw = AuthCallout.RawAuthUser(request.Connect);
        if (_callout.Options.AuthUsers.Contains(raw))
        {
            return _inner.Authenticate(request);
        }
        return _callout.Authorize(request);
    }
}
