namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// Unique event ids shaped like Go's NUID (22 base-62 characters: a random 12-character prefix and a
/// 10-character sequence), so consumers that store or parse them see the same form.
/// </summary>
internal sealed class EventIds
{
    private const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private const int PrefixLength = 12;
    private const int SequenceLength = 10;
    private const long MaxSequence = 839299365868340224L; // 62^10

    private readonly Lock _lock = new();
    private char[] _prefix = new char[PrefixLength];
    private long _sequence;
    private long _increment;

    public EventIds() => Reset();

    public string Next()
    {
        Span<char> id = stackalloc char[PrefixLength + SequenceLength];
        lock (_lock)
        {
            _sequence += _increment;
            if (_sequence >= MaxSequence)
            {
                Reset();
            }
            _prefix.CopyTo(id);
            var value = _sequence;
            for (var i = id.Length - 1; i >= PrefixLength; i--)
            {
                id[i] = Digits[(int)(value % Digits.Length)];
                value /= Digits.Length;
            }
        }
        return new string(id);
    }

    private void Reset()
    {
        for (var i = 0; i < PrefixLength; i++)
        {
            _prefix[i] = Digits[Random.Shared.Next(Digits.Length)];
        }
        _sequence = Random.Shared.NextInt64(MaxSequence / 2);
        _increment = 33 + Random.Shared.Next(300);
    }
}
