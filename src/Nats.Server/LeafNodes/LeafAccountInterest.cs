using Nats.Server.Accounts;
using Nats.Server.Subscriptions;

namespace Nats.Server.LeafNodes;

/// <summary>
/// One account's interest as its leaf connections see it (Go's updateLeafNodes): it observes the account's
/// index and passes every change to the <see cref="LeafSubjectMap"/> of each leaf connection bound to the
/// account, which decides what that peer is told. It also owns the account's loop-detection subject
/// (<c>$LDS.</c> and a unique id), which every leaf connection announces and which must never come back.
/// </summary>
internal sealed class LeafAccountInterest : ISubscriptionObserver
{
    public static ReadOnlySpan<byte> LoopPrefix => "$LDS."u8;

    private readonly Account _account;
    private volatile LeafConnection[] _connections = [];

    public LeafAccountInterest(Account account)
    {
        _account = account;
        LoopSubject = "$LDS." + NewNuid();
        LoopSubjectUtf8 = System.Text.Encoding.UTF8.GetBytes(LoopSubject);
    }

    public string LoopSubject { get; }
    public byte[] LoopSubjectUtf8 { get; }

    private static string NewNuid()
    {
        // Go uses a NUID: 22 base62 characters.
        const string alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> id = stackalloc char[22];
        for (var i = 0; i < id.Length; i++)
        {
            id[i] = alphabet[Random.Shared.Next(alphabet.Length)];
        }
        return new string(id);
    }

    public void Changed(Subscription subscription, int delta)
    {
        foreach (var connection in _connections)
        {
            connection.Sent.Update(subscription, delta);
        }
    }

    /// <summary>Sends the connection its initial interest and starts passing it changes, under the index lock so no
    /// change falls in between.</summary>
    public void Attach(LeafConnection connection)
    {
        _account.SubList.WithSnapshot(all =>
        {
            connection.Sent.Init(all, LoopSubject, _account.Mappings?.Entries.Select(e => e.Source) ?? []);
            _connections = [.. _connections, connection];
        });
    }

    public void Detach(LeafConnection connection)
    {
        _account.SubList.WithSnapshot(_ => _connections = [.. _connections.Where(c => !ReferenceEquals(c, connection))]);
    }
}
