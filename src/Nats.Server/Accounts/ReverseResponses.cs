using System.Text;
using Nats.Server.Auth;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Accounts;

/// <summary>
/// A requester account's view of its pending service-import responses, by reply subject (Go's
/// imports.rrMap): when the last subscription able to receive a reply goes away, the exporters'
/// mappings for it are dropped instead of waiting for the response threshold.
/// </summary>
internal sealed class ReverseResponses(Account owner)
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, List<ResponseEntry>> _byReply = new(StringComparer.Ordinal);
    private int _count;

    /// <summary>Read without the lock on every unsubscribe: zero means nothing to check.</summary>
    public bool IsEmpty => Volatile.Read(ref _count) == 0;

    public void Add(ResponseEntry entry)
    {
        var reply = Encoding.UTF8.GetString(entry.Reply);
        lock (_lock)
        {
            if (!_byReply.TryGetValue(reply, out var list))
            {
                _byReply[reply] = list = [];
            }
            list.Add(entry);
            Volatile.Write(ref _count, _count + 1);
        }
    }

    public void Remove(ResponseEntry entry)
    {
        var reply = Encoding.UTF8.GetString(entry.Reply);
        lock (_lock)
        {
            if (_byReply.TryGetValue(reply, out var list) && list.Remove(entry))
            {
                Volatile.Write(ref _count, _count - 1);
                if (list.Count == 0)
                {
                    _byReply.Remove(reply);
                }
            }
        }
    }

    /// <summary>Go's checkForReverseEntry after an unsubscribe: drops mappings whose reply nobody can receive any more.</summary>
    public void OnInterestRemoved(byte[] subject)
    {
        if (IsEmpty)
        {
            return;
        }
        var text = Encoding.UTF8.GetString(subject);
        List<ResponseEntry> orphaned = [];
        lock (_lock)
        {
            foreach (var (reply, entries) in _byReply)
            {
                var affected = reply == text || (SubjectRules.HasWildcard(text) && SubjectRules.IsSubsetMatch(reply, text));
                if (affected && owner.SubList.Match(entries[0].Reply).IsEmpty)
                {
                    orphaned.AddRange(entries);
                }
            }
        }
        foreach (var entry in orphaned)
        {
            entry.Import.Exporter.Responses.Remove(entry);
        }
    }
}
