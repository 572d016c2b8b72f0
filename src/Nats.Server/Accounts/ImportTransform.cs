using System.Text;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Accounts;

/// <summary>
/// Import renaming (a stream import's <c>to</c>/wildcard prefix, a service import's <c>to</c>): Go
/// tokenises the destination's i-th '*' into <c>$i</c> and builds the same transform subject mappings
/// use, so this validates with the import-specific rules and error texts of Go's newTransform calls
/// and then applies a <see cref="Mappings.SubjectTransform"/>.
/// </summary>
internal sealed class ImportTransform
{
    private const int StackTokens = 64;

    private readonly Mappings.SubjectTransform _inner;

    private ImportTransform(Mappings.SubjectTransform inner) => _inner = inner;

    /// <summary>
    /// Go's newTransform(src, transformTokenize(dest)) checks; null with Go's reason when the two do not fit.
    /// <paramref name="checkReverse"/> validates the reverse direction (service imports check the
    /// exporter's subject against the local one) while still producing source → destination.
    /// </summary>
    public static ImportTransform? Create(string source, string destination, out string? error, bool checkReverse = false)
    {
        error = null;
        var sourceTokens = SubjectTokens.Split(source);
        var destinationTokens = SubjectTokens.Split(destination);
        if (!SubjectRules.IsValid(source) || !SubjectRules.IsValid(destination)
            || SubjectTokens.IsFullWildcard(sourceTokens[^1]) != SubjectTokens.IsFullWildcard(destinationTokens[^1]))
        {
            error = "invalid subject";
            return null;
        }
        var sourceWildcards = CountWildcards(sourceTokens);
        var destinationWildcards = CountWildcards(destinationTokens);
        var (checkedSource, checkedDestination) = checkReverse ? (destinationWildcards, sourceWildcards) : (sourceWildcards, destinationWildcards);
        var checkedDestinationTokens = checkReverse ? sourceTokens : destinationTokens;
        if (checkedDestination > checkedSource)
        {
            var index = checkedSource + 1;
            error = $"invalid mapping destination: wildcard index out of range in ${index}: [{index}]";
            return null;
        }
        if (checkedDestination < checkedSource)
        {
            error = $"invalid mapping destination: not using all of the token wildcard(s) in {Mappings.SubjectTransform.TransformTokenize(checkedDestinationTokens)}";
            return null;
        }
        try
        {
            return new ImportTransform(Mappings.SubjectTransform.Create(source, Mappings.SubjectTransform.TransformTokenize(destinationTokens)));
        }
        catch (Mappings.MappingException e)
        {
            error = e.Message;
            return null;
        }
    }

    private static int CountWildcards(string[] tokens) => tokens.Count(t => SubjectTokens.IsSingleWildcard(t));

    /// <summary>
    /// Writes the transformed <paramref name="subject"/> (which matches the source) into
    /// <paramref name="scratch"/>, growing it when needed; returns the length written.
    /// </summary>
    public int Apply(ReadOnlySpan<byte> subject, ref byte[]? scratch)
    {
        Span<Range> stackTokens = stackalloc Range[StackTokens];
        var count = SubjectTokens.Tokenize(subject, stackTokens);
        ReadOnlySpan<Range> tokens = count >= 0 ? stackTokens[..count] : SubjectTokens.Tokenize(subject);
        var buffer = scratch ?? new byte[256];
        var length = _inner.Apply(subject, tokens, ref buffer);
        scratch = buffer;
        return length;
    }

    /// <summary>Convenience for tests: applies to a string subject.</summary>
    public string Apply(string subject)
    {
        byte[]? scratch = null;
        var length = Apply(Encoding.UTF8.GetBytes(subject), ref scratch);
        return Encoding.UTF8.GetString(scratch!, 0, length);
    }
}
