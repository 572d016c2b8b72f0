using System.Globalization;

namespace Nats.Server.Configuration;

// Value states: arrays, maps, strings, numbers, dates, blocks and include directives.
internal sealed partial class ConfigLexer
{
    private StateFn? LexArrayValue()
    {
        int r = Next();
        if (IsSpace(r))
        {
            return Skip(LexArrayValue);
        }
        if (r == '#')
        {
            Push(LexArrayValue);
            return LexComment;
        }
        if (r == '/')
        {
            if (Next() == '/')
            {
                Push(LexArrayValue);
                return LexComment;
            }
            Backup();
            return Error("Unexpected array value terminator ','.");
        }
        if (r == ',')
        {
            return Error("Unexpected array value terminator ','.");
        }
        if (r == ']')
        {
            return LexArrayEnd;
        }
        Backup();
        Push(LexArrayValueEnd);
        return LexValue;
    }

    private StateFn? LexArrayValueEnd()
    {
        int r = Next();
        if (IsWhitespace(r))
        {
            return Skip(LexArrayValueEnd);
        }
        if (r == '#')
        {
            Push(LexArrayValueEnd);
            return LexComment;
        }
        if (r == '/')
        {
            if (Next() == '/')
            {
                Push(LexArrayValueEnd);
                return LexComment;
            }
            Backup();
            return Skip(LexArrayValue);
        }
        if (r == ',' || IsNewLine(r))
        {
            return Skip(LexArrayValue);
        }
        if (r == ']')
        {
            return LexArrayEnd;
        }
        return Error($"Expected an array value terminator \",\" or an array terminator \"]\", but got '{Show(r)}' instead.");
    }

    private StateFn? LexArrayEnd()
    {
        Ignore();
        Emit(ConfigTokenKind.ArrayEnd);
        return Pop();
    }

    private StateFn? LexMapKeyStart()
    {
        int r = Peek();
        if (IsKeySeparator(r))
        {
            return Error($"Unexpected key separator '{Show(r)}'.");
        }
        if (r == ']')
        {
            return Error($"Unexpected array end '{Show(r)}' processing map.");
        }
        if (IsSpace(r))
        {
            Next();
            return Skip(LexMapKeyStart);
        }
        switch (r)
        {
            case '}':
                Next();
                return Skip(LexMapEnd);
            case '#':
                Next();
                Push(LexMapKeyStart);
                return LexComment;
            case '/':
                Next();
                if (Next() == '/')
                {
                    Push(LexMapKeyStart);
                    return LexComment;
                }
                // Go drops a lone '/' here and starts the key at the following character.
                Backup();
                break;
            case '\'':
                Next();
                return Skip(LexMapSingleQuotedKey);
            case '"':
                Next();
                return Skip(LexMapDoubleQuotedKey);
            case Eof:
                return Error("Unexpected EOF processing map.");
        }
        Ignore();
        Next();
        return LexMapKey;
    }

    private StateFn? LexMapSingleQuotedKey() => LexMapQuotedKey('\'', "Unexpected EOF processing quoted map key.", LexMapSingleQuotedKey);

    private StateFn? LexMapDoubleQuotedKey() => LexMapQuotedKey('"', "Unexpected EOF processing double quoted map key.", LexMapDoubleQuotedKey);

    private StateFn? LexMapQuotedKey(char quote, string eofError, StateFn self)
    {
        int r = Peek();
        if (r == Eof)
        {
            return Error(eofError);
        }
        if (r == quote)
        {
            Emit(ConfigTokenKind.Key);
            Next();
            return Skip(LexMapKeyEnd);
        }
        Next();
        return self;
    }

    private StateFn? LexMapKey()
    {
        int r = Peek();
        if (r == Eof)
        {
            return Error("Unexpected EOF processing map key.");
        }
        if (IsSpace(r))
        {
            return CheckKeyword(LexMapKeyEnd, LexMapValueEnd);
        }
        if (IsKeySeparator(r))
        {
            Emit(ConfigTokenKind.Key);
            return LexMapKeyEnd;
        }
        Next();
        return LexMapKey;
    }

    private StateFn? LexMapKeyEnd()
    {
        int r = Next();
        if (IsSpace(r))
        {
            return Skip(LexMapKeyEnd);
        }
        if (IsKeySeparator(r))
        {
            return Skip(LexMapValue);
        }
        Backup();
        return LexMapValue;
    }

    private StateFn? LexMapValue()
    {
        int r = Next();
        if (IsSpace(r))
        {
            return Skip(LexMapValue);
        }
        if (r == ',')
        {
            return Error("Unexpected map value terminator ','.");
        }
        if (r == '}')
        {
            return Skip(LexMapEnd);
        }
        Backup();
        Push(LexMapValueEnd);
        return LexValue;
    }

    private StateFn? LexMapValueEnd()
    {
        int r = Next();
        if (IsWhitespace(r))
        {
            return Skip(LexMapValueEnd);
        }
        if (r == '#')
        {
            Push(LexMapValueEnd);
            return LexComment;
        }
        if (r == '/')
        {
            if (Next() == '/')
            {
                Push(LexMapValueEnd);
                return LexComment;
            }
            Backup();
            return Skip(LexMapKeyStart);
        }
        if (r == ';' || r == ',' || IsNewLine(r))
        {
            return Skip(LexMapKeyStart);
        }
        if (r == '}')
        {
            return Skip(LexMapEnd);
        }
        return Error($"Expected a map value terminator \",\" or a map terminator \"}}\", but got '{Show(r)}' instead.");
    }

    private StateFn? LexMapEnd()
    {
        Ignore();
        Emit(ConfigTokenKind.MapEnd);
        return Pop();
    }

    private StateFn? LexSingleQuotedString()
    {
        int r = Next();
        if (r == '\'')
        {
            Backup();
            Emit(ConfigTokenKind.String);
            Next();
            Ignore();
            return Pop();
        }
        if (r == Eof)
        {
            return EndOfInput();
        }
        return LexSingleQuotedString;
    }

    private StateFn? LexDoubleQuotedString()
    {
        int r = Next();
        if (r == '\\')
        {
            AddCurrentPart(1);
            return LexStringEscape;
        }
        if (r == '"')
        {
            Backup();
            Emit(ConfigTokenKind.String);
            Next();
            Ignore();
            return Pop();
        }
        if (r == Eof)
        {
            return EndOfInput();
        }
        return LexDoubleQuotedString;
    }

    /// <summary>An unquoted string; it may turn out to be a boolean or a $variable.</summary>
    private StateFn? LexString()
    {
        int r = Next();
        if (r == '\\')
        {
            AddCurrentPart(1);
            return LexStringEscape;
        }
        if (IsNewLine(r) || r == Eof || r == ';' || r == ',' || r == ']' || r == '}' || IsWhitespace(r))
        {
            Backup();
            if (_hasParts)
            {
                Emit(ConfigTokenKind.String);
            }
            else if (IsBoolWord(_input.AsSpan(_start, _pos - _start)))
            {
                Emit(ConfigTokenKind.Bool);
            }
            else if (_start < _input.Length && _input[_start] == '$')
            {
                _start++;
                Emit(ConfigTokenKind.Variable);
            }
            else
            {
                Emit(ConfigTokenKind.String);
            }
            return Pop();
        }
        if (r == '\'')
        {
            Backup();
            Emit(ConfigTokenKind.String);
            Next();
            Ignore();
            return Pop();
        }
        return LexString;
    }

    internal static bool IsBoolWord(ReadOnlySpan<char> s) =>
        s.Equals("true", StringComparison.OrdinalIgnoreCase) || s.Equals("false", StringComparison.OrdinalIgnoreCase) ||
        s.Equals("yes", StringComparison.OrdinalIgnoreCase) || s.Equals("no", StringComparison.OrdinalIgnoreCase) ||
        s.Equals("on", StringComparison.OrdinalIgnoreCase) || s.Equals("off", StringComparison.OrdinalIgnoreCase);

    /// <summary>A heredoc-like block: everything after '(' up to a ')' alone on its own line.</summary>
    private StateFn? LexBlock()
    {
        int r = Next();
        if (r == Eof)
        {
            return Error("Unexpected EOF processing block.");
        }
        if (r == ')')
        {
            int close = _pos - 1;
            bool newlineBefore = close >= 1 && _input[close - 1] == '\n';
            bool newlineAfter = _pos >= _input.Length || _input[_pos] == '\n';
            if (newlineBefore && newlineAfter)
            {
                _pos = close;
                Emit(ConfigTokenKind.String);
                _pos = close + 1;
                Ignore();
                return Pop();
            }
        }
        return LexBlock;
    }

    private StateFn? LexStringEscape()
    {
        int r = Next();
        return r switch
        {
            'x' => LexStringHexEscape,
            't' => AddPart("\t"),
            'n' => AddPart("\n"),
            'r' => AddPart("\r"),
            '"' => AddPart("\""),
            '\\' => AddPart("\\"),
            _ => Error($"Invalid escape character '{Show(r)}'. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\."),
        };
    }

    private StateFn? LexStringHexEscape()
    {
        const string endOfLine = "Expected two hexadecimal digits after '\\x', but hit end of line";
        if (IsNewLine(Next()) || IsNewLine(Next()))
        {
            return Error(endOfLine);
        }
        string hex = _input[Math.Max(0, _pos - 2).._pos];
        if (hex.Length != 2 || !byte.TryParse(hex, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out byte b))
        {
            return Error($"Expected two hexadecimal digits after '\\x', but got '{hex}'");
        }
        return AddPart(((char)b).ToString());
    }

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

    private StateFn? LexIncludeStart()
    {
        int r = Next();
        if (IsWhitespace(r))
        {
            return Skip(LexIncludeStart);
        }
        Backup();
        return LexInclude;
    }

    private StateFn? LexInclude()
    {
        int r = Next();
        switch (r)
        {
            case '\'':
                Ignore();
                return LexIncludeSingleQuoted;
            case '"':
                Ignore();
                return LexIncludeDoubleQuoted;
            case '[':
                return Error("Expected include value but found start of an array");
            case '{':
                return Error("Expected include value but found start of a map");
            case '(':
                return Error("Expected include value but found start of a block");
            case '-':
                return Error("Expected include value but found start of a number");
            case '\\':
                return Error("Expected include value but found escape sequence");
        }
        if (IsDigit(r))
        {
            return Error("Expected include value but found start of a number");
        }
        if (IsNewLine(r))
        {
            return Error("Expected include value but found new line");
        }
        Backup();
        return LexIncludeBare;
    }

    private StateFn? LexIncludeSingleQuoted() => LexIncludeQuoted('\'', "Unexpected EOF in quoted include", LexIncludeSingleQuoted);

    private StateFn? LexIncludeDoubleQuoted() => LexIncludeQuoted('"', "Unexpected EOF in double quoted include", LexIncludeDoubleQuoted);

    private StateFn? LexIncludeQuoted(char quote, string eofError, StateFn self)
    {
        int r = Next();
        if (r == quote)
        {
            Backup();
            Emit(ConfigTokenKind.Include);
            Next();
            Ignore();
            return Pop();
        }
        return r == Eof ? Error(eofError) : self;
    }

    private StateFn? LexIncludeBare()
    {
        int r = Next();
        if (IsNewLine(r) || r == Eof || r == ';' || r == '}' || IsWhitespace(r))
        {
            Backup();
            Emit(ConfigTokenKind.Include);
            return Pop();
        }
        if (r == '\'')
        {
            Backup();
            Emit(ConfigTokenKind.Include);
            Next();
            Ignore();
            return Pop();
        }
        return LexIncludeBare;
    }
}
