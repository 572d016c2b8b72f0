namespace Nats.Server.Subscriptions;

/// <summary>
/// Admits a key into a match cache only on its second sighting, remembering first sightings by
/// hash alone. A reply subject used once (a request's inbox) then never costs a cache key copy or
/// pushes useful entries out; a subject published twice is cached from then on. A hash collision
/// only admits a key early, it never changes a match. Not thread-safe: callers hold their own lock
/// or own the filter.
/// </summary>
internal sealed class AdmissionFilter
{
    private const int Slots = 256;

    private readonly int[] _seen = new int[Slots];

    /// <summary>True when this hash was the last one seen in its slot; otherwise remembers it and says no.</summary>
    public bool Admit(int hash)
    {
        ref var slot = ref _seen[hash & (Slots - 1)];
        if (slot == hash)
        {
            return true;
        }
        slot = hash;
        return false;
    }
}
