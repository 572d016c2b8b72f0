using Nats.Server.Accounts;
using Nats.Server.Auth.Jwt;

namespace Nats.Server.Auth.Callout;

/// <summary>
/// One callout's frame (Go's processClientOrLeafCallout variables): the account the request is sent in,
/// the key that must have issued the user JWT (the configured issuer, or in operator mode the account
/// itself), the service's xkey when requests are sealed, and in operator mode the account JWT's
/// authorization block, which lets the user JWT come from an allowed account instead.
/// </summary>
internal sealed record CalloutScope(Account Account, string Issuer, string? XKey, ExternalAuthorization? External)
{
    public bool OperatorMode => External is not null;

    public static CalloutScope ForServerConfig(Account account, AuthCalloutOptions options) => new(account, options.Issuer, options.XKey, null);

    public static CalloutScope ForAccount(Account account, ExternalAuthorization external) =>
        new(account, account.Name, string.IsNullOrEmpty(external.XKey) ? null : external.XKey, external);
}
