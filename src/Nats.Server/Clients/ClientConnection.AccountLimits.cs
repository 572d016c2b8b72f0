using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;

namespace Nats.Server.Clients;

internal sealed partial class ClientConnection
{
    // -1: no limit. Owned by the read loop (set at CONNECT, read by SUB).
    private int _maxSubscriptions = -1;

    /// <summary>
    /// Go's applyAccountLimits: the client's max_payload and max_subscriptions are the smaller of the
    /// server's and its account's (-1 is no limit on the account side, 0 on the server side).
    /// </summary>
    private void ApplyAccountLimits()
    {
        var limits = Account.Options.Limits;
        var payload = MinLimit(limits.MaxPayload, _options.MaxPayload > 0 ? _options.MaxPayload : AccountLimits.NoLimit);
        var subscriptions = MinLimit(limits.MaxSubscriptions, _options.MaxSubscriptions > 0 ? _options.MaxSubscriptions : AccountLimits.NoLimit);
        if (limits.MaxPayload != AccountLimits.NoLimit && payload != limits.MaxPayload)
        {
            _logger.LogError("{Client} - Max Payload set to {Max} from server overrides account or user config", this, _options.MaxPayload);
        }
        if (limits.MaxSubscriptions != AccountLimits.NoLimit && subscriptions != limits.MaxSubscriptions)
        {
            _logger.LogError("{Client} - Max Subscriptions set to {Max} from server overrides account or user config", this, _options.MaxSubscriptions);
        }
        _maxPayload = payload == AccountLimits.NoLimit ? int.MaxValue : payload;
        _maxSubscriptions = subscriptions;
    }

    /// <summary>
    /// Go's processPing: a client speaking protocol 1 that sends its first PING after CONNECT gets a
    /// fresh INFO (right after that PONG, as Go writes it) when its max_payload differs from the server's (an account limit lowered it).
    /// </summary>
    private void CheckInfoOnFirstPing()
    {
        if (_firstPongSent || !_connectReceived)
        {
            return;
        }
        _firstPongSent = true;
        if (_connect.Protocol >= 1 && _maxPayload != _options.MaxPayload)
        {
            EnqueueProtocol(_server.RenderClientInfo(Id, RemoteIp, _maxPayload));
        }
    }

    private static int MinLimit(int value, int limit) =>
        limit != AccountLimits.NoLimit && (value == AccountLimits.NoLimit || limit < value) ? limit : value;
}
