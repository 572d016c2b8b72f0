using Nats.Server.Accounts;
using Nats.Server.Configuration;

namespace Nats.Server.Clients;

/// <summary>
/// Go's applyAccountLimits: a client's max_payload and max_subscriptions are the smaller of the
/// server's and its account's (-1 is no limit on the account side, 0 on the server side).
/// </summary>
/// <param name="MaxPayload">Largest payload the parser accepts (int.MaxValue: no limit).</param>
/// <param name="MaxSubscriptions">-1: no limit.</param>
/// <param name="ServerOverridesPayload">The account set a payload limit and the server's is lower (Go logs it).</param>
/// <param name="ServerOverridesSubscriptions">The account set a subscription limit and the server's is lower (Go logs it).</param>
internal readonly record struct ClientLimits(int MaxPayload, int MaxSubscriptions, bool ServerOverridesPayload, bool ServerOverridesSubscriptions)
{
    /// <param name="account">The account's limits.</param>
    /// <param name="server">The server's options.</param>
    /// <param name="userPayload">A user JWT's payload limit (-1: none), applied first as in Go.</param>
    /// <param name="userSubscriptions">A user JWT's subscription limit (-1: none).</param>
    public static ClientLimits Compute(AccountLimits account, ServerOptions server, int userPayload = AccountLimits.NoLimit, int userSubscriptions = AccountLimits.NoLimit)
    {
        var ownPayload = Min(userPayload, account.MaxPayload);
        var ownSubscriptions = Min(userSubscriptions, account.MaxSubscriptions);
        var payload = Min(ownPayload, server.MaxPayload > 0 ? server.MaxPayload : AccountLimits.NoLimit);
        var subscriptions = Min(ownSubscriptions, server.MaxSubscriptions > 0 ? server.MaxSubscriptions : AccountLimits.NoLimit);
        return new ClientLimits(
            payload == AccountLimits.NoLimit ? int.MaxValue : payload,
            subscriptions,
            ownPayload != AccountLimits.NoLimit && payload != ownPayload,
            ownSubscriptions != AccountLimits.NoLimit && subscriptions != ownSubscriptions);
    }

    private static int Min(int value, int limit) =>
        limit != AccountLimits.NoLimit && (value == AccountLimits.NoLimit || limit < value) ? limit : value;
}
