namespace Nats.Server.Configuration;

// Number states: integers with size suffixes, floats, IP addresses and ISO8601 dates.
internal sealed partial class ConfigLexer
{
    private StateFn? LexNumberStart()
    {
        int r = Next();
        if (!IsDigit(r))
        {
            return r == '.' ? Error("Floats must start with a digit, not '.'.") : Error($"Expected a digit but got '{Show(r)}'.");
        }
        return LexNumberOrDateOrString;
    }

    /// <summary>After a leading digit: an integer, float, date, IP address or a string like "10s".</summary>
    private StateFn? LexNumberOrDateOrString()
    {
        int r = Next();
        if (r == '-')
        {
            return _pos - _start != 5 ? Error("All ISO8601 dates must be in full Zulu form.") : LexDateAfterYear;
        }
        if (IsDigit(r))
        {
            return LexNumberOrDateOrString;
        }
        if (r == '.')
        {
            return LexFloatStart;
        }
        if (IsNumberSuffix(r))
        {
            return LexSizeSuffix;
        }
        if (!EndsNumber(r))
        {
            _stringState = LexString;
            return LexString;
        }
        Backup();
        Emit(ConfigTokenKind.Integer);
        return Pop();
    }

    /// <summary>Size suffixes such as 1k, 1KB, 1Mi, 1GiB.</summary>
    private StateFn? LexSizeSuffix()
    {
        int r = Next();
        if (r is 'b' or 'B' or 'i' or 'I')
        {
            return LexSizeSuffix;
        }
        Backup();
        if (EndsNumber(r))
        {
            Emit(ConfigTokenKind.Integer);
            return Pop();
        }
        _stringState = LexString;
        return LexString;
    }

    private StateFn? LexDateAfterYear()
    {
        const string pattern = "00-00T00:00:00Z";
        foreach (char f in pattern)
        {
            int r = Next();
            if (f == '0')
            {
                if (!IsDigit(r))
                {
                    return Error($"Expected digit in ISO8601 datetime, but found '{Show(r)}' instead.");
                }
            }
            else if (r != f)
            {
                return Error($"Expected '{f}' in ISO8601 datetime, but found '{Show(r)}' instead.");
            }
        }
        Emit(ConfigTokenKind.Datetime);
        return Pop();
    }

    private StateFn? LexNegativeNumberStart()
    {
        int r = Next();
        if (!IsDigit(r))
        {
            return r == '.' ? Error("Floats must start with a digit, not '.'.") : Error($"Expected a digit but got '{Show(r)}'.");
        }
        return LexNegativeNumber;
    }

    private StateFn? LexNegativeNumber()
    {
        int r = Next();
        if (IsDigit(r))
        {
            return LexNegativeNumber;
        }
        if (r == '.')
        {
            return LexFloatStart;
        }
        if (IsNumberSuffix(r))
        {
            return LexSizeSuffix;
        }
        Backup();
        Emit(ConfigTokenKind.Integer);
        return Pop();
    }

    private StateFn? LexFloatStart()
    {
        int r = Next();
        if (!IsDigit(r))
        {
            return Error($"Floats must have a digit after the '.', but got '{Show(r)}' instead.");
        }
        return LexFloat;
    }

    private StateFn? LexFloat()
    {
        int r = Next();
        if (IsDigit(r))
        {
            return LexFloat;
        }
        if (r == '.')
        {
            return LexIpAddress;
        }
        Backup();
        Emit(ConfigTokenKind.Float);
        return Pop();
    }

    /// <summary>A "float" with a second dot is an address such as 127.0.0.1:4222, kept as a string.</summary>
    private StateFn? LexIpAddress()
    {
        int r = Next();
        if (IsDigit(r) || r is '.' or ':' or '-')
        {
            return LexIpAddress;
        }
        Backup();
        Emit(ConfigTokenKind.String);
        return Pop();
    }
}
