using Nats.Server.Accounts;

namespace Nats.Server.Clients;

/// <summary>How a move to another account ended (<see cref="AccountMembership.MoveTo"/>).</summary>
internal enum AccountMove
{
    Moved,

    /// <summary>The client is already in that account.</summary>
    AlreadyThere,

    /// <summary>The connection is gone and has left its account: nothing joins any more.</summary>
    Released,

    /// <summary>The target is at its connection limit; the client stays counted where it was.</summary>
    TargetFull,
}

/// <summary>
/// Which account a connection is counted in (Go's registerWithAccount): it starts in the account it
/// was admitted to, may move once it authenticates, and leaves exactly once when it closes. The move
/// and the release share a lock so a close racing with CONNECT never leaves a count behind.
/// </summary>
internal sealed class AccountMembership
{
    private readonly Lock _gate = new();
    private Account _account;
    private bool _released;

    public AccountMembership(Account account) => _account = account;

    public Account Account => _account;

    public bool Released
    {
        get
        {
            lock (_gate)
            {
                return _released;
            }
        }
    }

    /// <summary>Joins <paramref name="target"/> within its connection limit and leaves the current account.</summary>
    public AccountMove MoveTo(Account target)
    {
        if (ReferenceEquals(target, _account))
        {
            return AccountMove.AlreadyThere;
        }
        lock (_gate)
        {
            if (_released)
            {
                return AccountMove.Released;
            }
            if (!target.TryAddClient())
            {
                return AccountMove.TargetFull;
            }
            _account.RemoveClient();
            _account = target;
            return AccountMove.Moved;
        }
    }

    /// <summary>Leaves the account's connection count, once.</summary>
    public void Release()
    {
        lock (_gate)
        {
            if (!_released)
            {
                _released = true;
                _account.RemoveClient();
            }
        }
    }
}
