using System.Globalization;
using System.Text;
using Nats.Server.Subscriptions;

namespace Nats.Server.Accounts;

/// <summary>
/// An isolated subject space: its own subscription index, so a message published in one account
/// reaches only that account's subscribers (imports and exports are the sanctioned ways across).
/// Every client without an account of its own lives in the global account "$G", as in Go.
/// </summary>
internal sealed class Account
{
    public const string GlobalAccountName = "$G";

    private int _clientCount;

    /// <summary>Replies of requests that came over a gateway (<c>_GR_.</c>), created with the first one.</summary>
    internal Gateways.GatewayReplyMap? GatewayReplies;
    private long _internalSid;
    private ServiceResponses? _responses;

    public Account(string name, AccountOptions? options = null)
    {
        Name = name;
        NameUtf8 = global::System.Text.Encoding.UTF8.GetBytes(name);
        Options = options ?? new AccountOptions(name);
        CreatedAt = DateTime.UtcNow;
    }

    public string Name { get; }

    /// <summary>The name as it is written into RS+/RS-/RMSG lines.</summary>
    public byte[] NameUtf8 { get; }

    /// <summary>The account's configuration (an empty one for $G and a created $SYS).</summary>
    public AccountOptions Options { get; internal set; }

    public SubList SubList { get; } = new();

    public bool IsSystem { get; internal set; }

    public DateTime CreatedAt { get; }

    /// <summary>Client connections bound to the account right now.</summary>
    public int ClientCount => Volatile.Read(ref _clientCount);

    /// <summary>The account's connections on the other servers of the cluster, which count against its limits as Go counts them.</summary>
    public RemoteConnections Remote { get; } = new();

    /// <summary>Go's MaxTotalConnectionsReached (local clients plus those other servers report), checked before a client joins.</summary>
    public bool TryAddClient()
    {
        var max = Options.Limits.MaxConnections;
        while (true)
        {
            var current = Volatile.Read(ref _clientCount);
            if (max != AccountLimits.NoLimit && current + Remote.Clients >= max)
            {
                return false;
            }
            if (Interlocked.CompareExchange(ref _clientCount, current + 1, current) == current)
            {
                return true;
            }
        }
    }

    public void RemoveClient() => Interlocked.Decrement(ref _clientCount);

    private int _leafCount;

    /// <summary>Leaf connections bound to the account right now.</summary>
    public int LeafCount => Volatile.Read(ref _leafCount);

    /// <summary>Go's MaxTotalLeafNodesReached (max_leafnodes), checked before a leaf connection joins.</summary>
    public bool TryAddLeaf()
    {
        var max = Options.Limits.MaxLeafNodes;
        while (true)
        {
            var current = Volatile.Read(ref _leafCount);
            if (max != AccountLimits.NoLimit && current + Remote.Leafs >= max)
            {
                return false;
            }
            if (Interlocked.CompareExchange(ref _leafCount, current + 1, current) == current)
            {
                return true;
            }
        }
    }

    public void RemoveLeaf() => Interlocked.Decrement(ref _leafCount);


    /// <summary>Operator mode: the account JWT in force (signers, revocations, expiry); null for configured accounts.</summary>
    public Auth.Jwt.AccountJwt? Jwt
    {
        get => Volatile.Read(ref _jwt);
        set => Volatile.Write(ref _jwt, value);
    }

    private Auth.Jwt.AccountJwt? _jwt;

    /// <summary>
    /// Operator mode (Go's Account.expired): set when the JWT's exp passes or the full resolver deletes
    /// the account; logins are refused until an update brings new claims.
    /// </summary>
    public bool Expired
    {
        get => Volatile.Read(ref _expired);
        set => Volatile.Write(ref _expired, value);
    }

    private bool _expired;

    /// <summary>Subject mappings applied to what this account's clients publish; null when there are none.</summary>
    public Mappings.SubjectMapper? Mappings { get; set; }

    /// <summary>Response routing for requests that reach this account through service imports (created on first use).</summary>
    public ServiceResponses Responses
    {
        get
        {
            var responses = Volatile.Read(ref _responses);
            if (responses is null)
            {
                Interlocked.CompareExchange(ref _responses, new ServiceResponses(this), null);
                responses = _responses!;
            }
            return responses;
        }
    }

    /// <summary>Pending responses this account's clients wait for, by reply subject.</summary>
    public ReverseResponses ReverseResponses
    {
        get
        {
            if (Volatile.Read(ref _reverseResponses) is null)
            {
                Interlocked.CompareExchange(ref _reverseResponses, new ReverseResponses(this), null);
            }
            return _reverseResponses!;
        }
    }

    private ReverseResponses? _reverseResponses;

    /// <summary>Called after subscriptions of this account left the index: Go's interest-loss cleanup of response mappings.</summary>
    public void OnSubscriptionsRemoved(IEnumerable<Subscriptions.Subscription> removed)
    {
        var reverse = Volatile.Read(ref _reverseResponses);
        if (reverse is null || reverse.IsEmpty)
        {
            return;
        }
        foreach (var subscription in removed)
        {
            reverse.OnInterestRemoved(subscription.Subject);
        }
    }

    /// <summary>The single-subscription form (UNSUB, auto-unsubscribe): no allocation when nothing is pending.</summary>
    public void OnSubscriptionRemoved(Subscriptions.Subscription removed)
    {
        var reverse = Volatile.Read(ref _reverseResponses);
        if (reverse is not null && !reverse.IsEmpty)
        {
            reverse.OnInterestRemoved(removed.Subject);
        }
    }

    /// <summary>Null until a request crossed a service import into this account.</summary>
    public ServiceResponses? ResponsesIfCreated => Volatile.Read(ref _responses);

    /// <summary>The routes of this account's imports and the account whose index holds each (operator mode takes them out again on updates).</summary>
    internal List<(Account Owner, Subscription Subscription)> ImportSubscriptions { get; } = [];

    /// <summary>Set once the system account's <c>$JS.API.&gt;</c> import is in place (<see cref="JetStreamApiImport"/>).</summary>
    internal bool JetStreamApiImported { get; set; }

    /// <summary>Operator mode: exporters some of this account's imports could not be added from (resolved again when they change).</summary>
    internal IReadOnlySet<string> IncompleteImportsFrom { get; set; } = new HashSet<string>();

    /// <summary>Stream import routes placed in this account's index; Go has no subscription for them, so monitoring leaves them out.</summary>
    public int HiddenSubscriptions { get; internal set; }

    /// <summary>Subscriptions as Go counts them.</summary>
    public int VisibleSubscriptionCount => SubList.Count - HiddenSubscriptions;

    internal byte[] NextInternalSid() => Encoding.ASCII.GetBytes(Interlocked.Increment(ref _internalSid).ToString(CultureInfo.InvariantCulture));

    public override string ToString() => Name;
}
