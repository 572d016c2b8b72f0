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
    public static ClientLimits Compute(AccountLimits account, ServerOptions server)
    {
        var payload = Min(account.MaxPayload, server.MaxPayload > 0 ? server.MaxPayload : AccountLimits.NoLimit);
        var subscriptions = Min(account.MaxSubscriptions, server.MaxSubscriptions > 0 ? server.MaxSubscriptions : AccountLimits.NoLimit);
        return new ClientLimits(
            payload == AccountLimits.NoLimit ? int.MaxValue : payload,
            subscriptions,
            account.MaxPayload != AccountLimits.NoLimit && payload != account.MaxPayload,
            account.MaxSubscriptions != AccountLimits.NoLimit && subscriptions != account.MaxSubscriptions);
    }

    private static int Min(int value, int limit) =>
        limit != AccountLimits.NoLimit && (value == AccountLimits.NoLimit || limit < value) ? limit : value;
}
