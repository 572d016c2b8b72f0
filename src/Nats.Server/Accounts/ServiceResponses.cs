using System.Diagnostics;
using System.Text;
using Nats.Server.Subscriptions;

namespace Nats.Server.Accounts;

/// <summary>One pending request through a service import: where the answer to <see cref="Subject"/> goes.</summary>
internal sealed class ResponseEntry(byte[] subject, Account requester, byte[] reply, ServiceImportRoute import)
{
    public byte[] Subject { get; } = subject;

    /// <summary>The account the request came from and the reply subject the requester is listening on.</summary>
    public Account Requester { get; } = requester;

    public byte[] Reply { get; } = reply;

    public ServiceImportRoute Import { get; } = import;

    /// <summary>Last use (creation or a streamed delivery), Stopwatch ticks.</summary>
    public long Touched = Stopwatch.GetTimestamp();
}

/// <summary>
/// An exporting account's response map (Go's exports.responses): each request that crosses a service
/// import gets a reply subject <c>_R_.&lt;account prefix&gt;.&lt;random&gt;</c> in this account, and one
/// internal wildcard subscription on the prefix routes what responders publish there back to the
/// requester. Singleton entries go after the first response; streamed and chunked ones stay until the
/// export's response threshold passes without traffic.
/// </summary>
internal sealed class ServiceResponses
{
    private const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private const int RandomLength = 6;

    private readonly Account _owner;
    private readonly Lock _lock = new();
    private readonly Dictionary<byte[], ResponseEntry> _entries = new(ByteKeyComparer.Instance);
    private readonly Dictionary<byte[], ResponseEntry>.AlternateLookup<ReadOnlySpan<byte>> _lookup;
    private readonly byte[] _prefix;
    private Timer? _sweeper;
    private bool _subscribed;

    public ServiceResponses(Account owner)
    {
        _owner = owner;
        _lookup = _entries.GetAlternateLookup<ReadOnlySpan<byte>>();
        Span<char> prefix = stackalloc char[4 + RandomLength + 1];
        "_R_.".CopyTo(prefix);
        FillRandom(prefix.Slice(4, RandomLength));
        prefix[^1] = '.';
        _prefix = Encoding.ASCII.GetBytes(prefix.ToArray());
    }

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _entries.Count;
            }
        }
    }

    /// <summary>Registers a pending request and returns the reply subject responders in this account publish to.</summary>
    public ResponseEntry Create(Account requester, ReadOnlySpan<byte> reply, ServiceImportRoute import)
    {
        var subject = new byte[_prefix.Length + RandomLength];
        _prefix.CopyTo(subject, 0);
        var entry = new ResponseEntry(subject, requester, reply.ToArray(), import);
        lock (_lock)
        {
            do
            {
                FillRandom(subject.AsSpan(_prefix.Length));
            }
            while (_entries.ContainsKey(subject));
            _entries[subject] = entry;
            if (!_subscribed)
            {
                // Inside the lock: no response may be published before the route exists.
                _subscribed = true;
                var wildcard = new byte[_prefix.Length + 1];
                _prefix.CopyTo(wildcard, 0);
                wildcard[^1] = (byte)'>';
                _owner.SubList.Insert(new Subscription(new ResponseRoute(this), wildcard, null, _owner.NextInternalSid()));
            }
            _sweeper ??= new Timer(_ => Sweep(), null, SweepPeriod(), SweepPeriod());
        }
        requester.ReverseResponses.Add(entry);
        return entry;
    }

    public ResponseEntry? Find(ReadOnlySpan<byte> subject)
    {
        lock (_lock)
        {
            return _lookup.TryGetValue(subject, out var entry) ? entry : null;
        }
    }

    /// <summary>Removes the entry; false when it was already gone (another response or the sweeper got there first).</summary>
    public bool Remove(ResponseEntry entry)
    {
        bool removed;
        lock (_lock)
        {
            removed = _entries.Remove(entry.Subject);
        }
        if (removed)
        {
            entry.Requester.ReverseResponses.Remove(entry);
        }
        return removed;
    }

    /// <summary>Drops every pending response and its timer (server shutdown).</summary>
    public void Clear()
    {
        lock (_lock)
        {
            foreach (var entry in _entries.Values)
            {
                entry.Requester.ReverseResponses.Remove(entry);
            }
            _entries.Clear();
            _sweeper?.Dispose();
            _sweeper = null;
        }
    }

    public List<ResponseEntry> Snapshot()
    {
        lock (_lock)
        {
            return [.. _entries.Values];
        }
    }

    /// <summary>Drops entries idle for longer than their export's response threshold (Go's checkExpiredResponses).</summary>
    internal void Sweep()
    {
        var now = Stopwatch.GetTimestamp();
        lock (_lock)
        {
            List<byte[]>? expired = null;
            foreach (var (key, entry) in _entries)
            {
                if (Stopwatch.GetElapsedTime(Volatile.Read(ref entry.Touched), now) >= entry.Import.ResponseThreshold)
                {
                    (expired ??= []).Add(key);
                }
            }
            foreach (var key in expired ?? [])
            {
                if (_entries.Remove(key, out var entry))
                {
                    // The requester's reverse map has its own lock and never calls back here.
                    entry.Requester.ReverseResponses.Remove(entry);
                }
            }
            if (_entries.Count == 0 && _sweeper is not null)
            {
                _sweeper.Dispose();
                _sweeper = null;
            }
        }
    }

    private TimeSpan SweepPeriod()
    {
        var shortest = ResolvedServiceExport.DefaultResponseThreshold;
        foreach (var export in _owner.Options.ServiceExports)
        {
            if (export.ResponseThreshold > TimeSpan.Zero && export.ResponseThreshold < shortest)
            {
                shortest = export.ResponseThreshold;
            }
        }
        // Entries live at most about one and a half thresholds.
        return TimeSpan.FromTicks(Math.Max(shortest.Ticks / 2, TimeSpan.FromMilliseconds(10).Ticks));
    }

    private static void FillRandom(Span<char> chars)
    {
        for (var i = 0; i < chars.Length; i++)
        {
            chars[i] = Digits[Random.Shared.Next(Digits.Length)];
        }
    }

    private static void FillRandom(Span<byte> bytes)
    {
        for (var i = 0; i < bytes.Length; i++)
        {
            bytes[i] = (byte)Digits[Random.Shared.Next(Digits.Length)];
        }
    }
}
