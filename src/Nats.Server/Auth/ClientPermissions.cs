using System.Diagnostics;
using System.Text;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Auth;

/// <summary>
/// One connection's view of its user's permissions, with the per-client caches the Go server keeps:
/// publish results per subject (pcache), the delivery deny filter for wildcard subscriptions that
/// overlap a subscribe deny (mperms), and reply subjects it may answer (allow_responses).
/// </summary>
internal sealed class ClientPermissions
{
    // Go's maxPermCacheSize, maxDenyPermCacheSize, pruneSize and replyPermLimit.
    private const int MaxPublishCache = 128;
    private const int MaxDenyCache = 256;
    private const int PruneSize = 32;
    private const int ReplyLimit = 4096;

    private readonly CompiledPermissions _permissions;

    // Touched only by the connection's own read loop, so no lock.
    private readonly Dictionary<byte[], bool> _publishCache = new(ByteKeyComparer.Instance);
    private readonly Dictionary<byte[], bool>.AlternateLookup<ReadOnlySpan<byte>> _publishCacheLookup;

    // Touched by publishers' read loops (delivery) and our own (publish), hence the lock.
    private readonly Lock _lock = new();
    private readonly Dictionary<string, ReplyGrant>? _replies;
    private Dictionary<byte[], bool>? _denyCache;
    private volatile bool _deliveryFilterOn;

    public ClientPermissions(CompiledPermissions permissions)
    {
        _permissions = permissions;
        _publishCacheLookup = _publishCache.GetAlternateLookup<ReadOnlySpan<byte>>();
        if (permissions.Response is not null)
        {
            _replies = new Dictionary<string, ReplyGrant>(StringComparer.Ordinal);
        }
    }

    public bool HasPublishRules => _permissions.HasPublishRules;

    /// <summary>Go's pubAllowed. Results are cached per subject except dynamic response grants.</summary>
    public bool CanPublish(ReadOnlySpan<byte> subject)
    {
        if (!_permissions.HasPublishRules)
        {
            return true;
        }
        if (_publishCacheLookup.TryGetValue(subject, out var cached))
        {
            return cached;
        }
        var allowed = true;
        if (_permissions.PublishAllow is { } allow)
        {
            allowed = allow.MatchesPlain(subject);
        }
        if (allowed && _permissions.PublishDeny is { } deny)
        {
            allowed = !deny.MatchesPlain(subject);
        }
        if (!allowed && _replies is not null)
        {
            return UseReplyGrant(Encoding.UTF8.GetString(subject));
        }
        if (_publishCache.Count >= MaxPublishCache)
        {
            Prune(_publishCache, PruneSize);
        }
        _publishCacheLookup[subject] = allowed;
        return allowed;
    }

    /// <summary>Go's canSubscribe; may switch on the delivery deny filter for broad wildcard subscriptions.</summary>
    public bool CanSubscribe(string subject, string? queue)
    {
        var allowed = true;
        if (_permissions.SubscribeAllow is { } allow)
        {
            allow.Match(subject, out var plain, out var queues);
            allowed = plain;
            if (queue is not null && queues is not null)
            {
                allowed = SubjectPatterns.QueueMatches(queue, queues);
            }
        }
        if (allowed && _permissions.SubscribeDeny is { } deny)
        {
            deny.Match(subject, out var plain, out var queues);
            allowed = !plain;
            if (queue is not null && queues is not null)
            {
                allowed = !SubjectPatterns.QueueMatches(queue, queues);
            }
            // A wildcard subscription wider than a deny entry is allowed, but the denied subjects
            // must then be filtered out of what it receives.
            if (allowed && !_deliveryFilterOn && SubjectRules.HasWildcard(subject))
            {
                foreach (var denied in _permissions.SubscribeDenyRaw)
                {
                    if (SubjectRules.IsSubsetMatch(denied, subject))
                    {
                        lock (_lock)
                        {
                            _denyCache ??= new Dictionary<byte[], bool>(ByteKeyComparer.Instance);
                        }
                        _deliveryFilterOn = true;
                        break;
                    }
                }
            }
        }
        return allowed;
    }

    /// <summary>
    /// Called for every message about to be queued to this client (on the publisher's thread):
    /// false when a subscribe deny covers the subject; records the reply subject for allow_responses.
    /// </summary>
    public bool AllowDelivery(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply)
    {
        if (!_deliveryFilterOn && (_replies is null || reply.IsEmpty))
        {
            return true;
        }
        lock (_lock)
        {
            if (_deliveryFilterOn && IsDeliveryDenied(subject))
            {
                return false;
            }
            if (_replies is not null && !reply.IsEmpty)
            {
                _replies[Encoding.UTF8.GetString(reply)] = new ReplyGrant(Stopwatch.GetTimestamp(), 0);
                if (_replies.Count > ReplyLimit)
                {
                    PruneReplies();
                }
            }
        }
        return true;
    }

    private bool IsDeliveryDenied(ReadOnlySpan<byte> subject)
    {
        var cache = _denyCache!;
        var lookup = cache.GetAlternateLookup<ReadOnlySpan<byte>>();
        if (lookup.TryGetValue(subject, out var denied))
        {
            return denied;
        }
        denied = _permissions.DeliveryDeny!.MatchesPlain(subject);
        if (cache.Count >= MaxDenyCache)
        {
            Prune(cache, PruneSize);
        }
        lookup[subject] = denied;
        return denied;
    }

    private bool UseReplyGrant(string subject)
    {
        var response = _permissions.Response!;
        lock (_lock)
        {
            if (!_replies!.TryGetValue(subject, out var grant))
            {
                return false;
            }
            grant = grant with { Count = grant.Count + 1 };
            if (response.MaxMsgs > 0 && grant.Count > response.MaxMsgs)
            {
                _replies.Remove(subject);
                return false;
            }
            if (response.Expires > TimeSpan.Zero && Stopwatch.GetElapsedTime(grant.Granted) > response.Expires)
            {
                _replies.Remove(subject);
                return false;
            }
            _replies[subject] = grant;
            return true;
        }
    }

    private void PruneReplies()
    {
        var response = _permissions.Response!;
        List<string>? stale = null;
        foreach (var (key, grant) in _replies!)
        {
            if ((response.MaxMsgs > 0 && grant.Count >= response.MaxMsgs)
                || (response.Expires > TimeSpan.Zero && Stopwatch.GetElapsedTime(grant.Granted) > response.Expires))
            {
                (stale ??= []).Add(key);
            }
        }
        if (stale is not null)
        {
            foreach (var key in stale)
            {
                _replies.Remove(key);
            }
        }
    }

    private static void Prune<TKey, TValue>(Dictionary<TKey, TValue> cache, int count)
        where TKey : notnull
    {
        var victims = cache.Keys.Take(count).ToArray();
        foreach (var key in victims)
        {
            cache.Remove(key);
        }
    }

    private readonly record struct ReplyGrant(long Granted, int Count);
}
