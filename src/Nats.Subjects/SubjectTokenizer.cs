using System.Numerics;

namespace Nats.Subjects;

/// <summary>
/// Allocation-free walk over a subject's tokens (as ranges into it), empty tokens included: "a..b" yields
/// "a", "", "b" and "" yields one empty token, as Go's strings.Split does.
/// </summary>
internal ref struct SubjectTokenizer<T>
    where T : unmanaged, IBinaryInteger<T>
{
    private readonly ReadOnlySpan<T> _subject;
    private int _next;
    private Range _current;

    public SubjectTokenizer(ReadOnlySpan<T> subject)
    {
        _subject = subject;
        _next = 0;
        _current = default;
    }

    public readonly SubjectTokenizer<T> GetEnumerator() => this;

    public readonly Range Current => _current;

    public bool MoveNext()
    {
        if (_next > _subject.Length)
        {
            return false;
        }
        var dot = _subject[_next..].IndexOf(T.CreateTruncating(SubjectTokens.Separator));
        var end = dot < 0 ? _subject.Length : _next + dot;
        _current = new Range(_next, end);
        _next = end + 1;
        return true;
    }

    /// <summary>The next token itself, or false at the end.</summary>
    public bool Next(out ReadOnlySpan<T> token)
    {
        if (!MoveNext())
        {
            token = default;
            return false;
        }
        token = _subject[_current];
        return true;
    }
}
