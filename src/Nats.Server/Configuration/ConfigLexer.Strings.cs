using System.Globalization;

namespace Nats.Server.Configuration;

// String states: quoted, bare, escapes, heredoc blocks and include directives.
internal sealed partial class ConfigLexer
{
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
