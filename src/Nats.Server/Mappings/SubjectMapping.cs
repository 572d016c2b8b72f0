namespace Nats.Server.Mappings;

/// <summary>
/// One entry of a <c>mappings</c> block: messages published on <see cref="Source"/> (which may hold
/// wildcards) are delivered on one of the <see cref="Destinations"/>, chosen by weight.
/// </summary>
public sealed record SubjectMapping(string Source, IReadOnlyList<MappingDestination> Destinations)
{
    /// <summary>A plain "src: dest" mapping (weight 100).</summary>
    public SubjectMapping(string source, string destination)
        : this(source, [new MappingDestination(destination)])
    {
    }
}

/// <summary>
/// A weighted destination (Go's MapDest). <paramref name="Weight"/> is a percentage (0-100). A
/// <paramref name="Cluster"/> scopes the destination to servers of that cluster.
/// </summary>
public sealed record MappingDestination(string Subject, int Weight = 100, string Cluster = "");
