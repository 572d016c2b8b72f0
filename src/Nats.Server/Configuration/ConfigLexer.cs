using System.Text;

namespace Nats.Server.Configuration;

/// <summary>
/// Tokenizer for the nats-server configuration format. It is a state machine whose states and
/// transitions reproduce the Go server's accepted grammar (conf/lex.go at v2.9.10), quirks included,
/// because a config file that Go accepts must mean the same thing here, and one it rejects must be
/// rejected. Notable quirks kept on purpose: <c>2m</c> is the integer 2,000,000 (not a duration),
/// a number directly followed by <c>]</c> becomes a string, and keys end only at whitespace or a separator.
/// </summary>
internal sealed partial class ConfigLexer
{
    private const int Eof = -1;

    private delegate StateFn? StateFn();

    private readonly string _input;
    private readonly List<ConfigToken> _tokens = [];
    private readonly Stack<StateFn> _stack = new();
    private readonly StringBuilder _parts = new();
    private bool _hasParts;
    private StateFn _stringState;
    private int _start;
    private int _pos;
    private int _width;
    private int _line = 1;

    private ConfigLexer(string input)
    {
        _input = input;
        _stringState = LexString;
    }

    /// <summary>Lexes the whole input. The list ends with an Eof or an Error token.</summary>
    public static List<ConfigToken> Tokenize(string input)
    {
        var lx = new ConfigLexer(input);
        StateFn? state = lx.LexTop;
        while (state is not null)
        {
            state = state();
        }
        return lx._tokens;
    }

    private int Next()
    {
        if (_pos >= _input.Length)
        {
            _width = 0;
            return Eof;
        }
        char c = _input[_pos];
        if (c == '\n')
        {
            _line++;
        }
        _width = 1;
        _pos++;
        // Go's lexer uses rune 0 as its eof marker, so a NUL byte in the text reads as the end there.
        return c == '\0' ? Eof : c;
    }

    private void Backup()
    {
        _pos -= _width;
        if (_width > 0 && _pos < _input.Length && _input[_pos] == '\n')
        {
            _line--;
        }
        _width = 0;
    }

    private int Peek()
    {
        int r = Next();
        Backup();
        return r;
    }

    private void Ignore() => _start = _pos;

    private StateFn Skip(StateFn next)
    {
        Ignore();
        return next;
    }

    private void Push(StateFn state) => _stack.Push(state);

    private StateFn? Pop() => _stack.Count == 0 ? Error("BUG in lexer: no states to pop.") : _stack.Pop();

    private void Emit(ConfigTokenKind kind)
    {
        string text = _input[_start.._pos];
        if (_hasParts)
        {
            text = _parts.Append(text).ToString();
            _parts.Clear();
            _hasParts = false;
        }
        _tokens.Add(new ConfigToken(kind, text, _line, ColumnOf(_pos - text.Length)));
        _start = _pos;
    }

    private void EmitEof() => _tokens.Add(new ConfigToken(ConfigTokenKind.Eof, "", _line, 0));

    /// <summary>Go measures columns from the last newline character, so line 1 is 0-based and later lines 1-based.</summary>
    private int ColumnOf(int offset)
    {
        offset = Math.Clamp(offset, 0, _input.Length);
        int nl = offset == 0 ? -1 : _input.LastIndexOf('\n', offset - 1);
        return offset - Math.Max(nl, 0);
    }

    private void AddCurrentPart(int offset)
    {
        _parts.Append(_input, _start, _pos - offset - _start);
        _hasParts = true;
        _start = _pos;
    }

    private StateFn AddPart(string s)
    {
        _parts.Append(s);
        _hasParts = true;
        _start = _pos;
        return _stringState;
    }

    private StateFn? Error(string message)
    {
        _tokens.Add(new ConfigToken(ConfigTokenKind.Error, message, _line, ColumnOf(_pos)));
        return null;
    }

    /// <summary>Renders a rune the way Go's %v does in lexer errors (new lines escaped; Go's eof is rune 0, printed as a NUL byte).</summary>
    private static string Show(int r) => r switch
    {
        Eof => "\0",
        '\n' => "\\n",
        _ => ((char)r).ToString(),
    };

    private static bool IsSpace(int r) => r != Eof && char.IsWhiteSpace((char)r);

    private static bool IsWhitespace(int r) => r is '\t' or ' ';

    private static bool IsNewLine(int r) => r is '\n' or '\r';

    private static bool IsKeySeparator(int r) => r is '=' or ':';

    private static bool IsDigit(int r) => r != Eof && char.IsDigit((char)r);

    private static bool IsNumberSuffix(int r) => r is 'k' or 'K' or 'm' or 'M' or 'g' or 'G' or 't' or 'T' or 'p' or 'P' or 'e' or 'E';

    private static bool EndsNumber(int r) =>
        IsNewLine(r) || r == Eof || r == '}' || r == ';' || r == ',' || IsWhitespace(r) || IsDigit(r);

    private StateFn? LexTop()
    {
        int r = Next();
        if (IsSpace(r))
        {
            return Skip(LexTop);
        }
        switch (r)
        {
            case '{':
                return Skip(LexTop);
            case '#':
                Push(LexTop);
                return LexComment;
            case '/':
                if (Next() == '/')
                {
                    Push(LexTop);
                    return LexComment;
                }
                Backup();
                return EndOfInput();
            case Eof:
                return EndOfInput();
        }
        Backup();
        Push(LexTopValueEnd);
        return LexKeyStart;
    }

    private StateFn? EndOfInput()
    {
        if (_pos > _start)
        {
            return Error("Unexpected EOF.");
        }
        EmitEof();
        return null;
    }

    private StateFn? LexTopValueEnd()
    {
        int r = Next();
        if (r == '#')
        {
            Push(LexTop);
            return LexComment;
        }
        if (r == '/')
        {
            if (Next() == '/')
            {
                Push(LexTop);
                return LexComment;
            }
            Backup();
            return LexTopValueEnd;
        }
        if (IsWhitespace(r))
        {
            return LexTopValueEnd;
        }
        if (IsNewLine(r) || r == Eof || r == ';' || r == ',' || r == '}')
        {
            Ignore();
            return LexTop;
        }
        return Error($"Expected a top-level value to end with a new line, comment or EOF, but got '{Show(r)}' instead.");
    }

    private StateFn? LexKeyStart()
    {
        int r = Peek();
        if (IsKeySeparator(r))
        {
            return Error($"Unexpected key separator '{Show(r)}'");
        }
        if (IsSpace(r))
        {
            Next();
            return Skip(LexKeyStart);
        }
        if (r is '"' or '\'')
        {
            Next();
            return Skip(r == '"' ? LexDoubleQuotedKey : LexSingleQuotedKey);
        }
        Ignore();
        Next();
        return LexKey;
    }

    private StateFn? LexDoubleQuotedKey() => LexQuotedKey('"', LexDoubleQuotedKey);

    private StateFn? LexSingleQuotedKey() => LexQuotedKey('\'', LexSingleQuotedKey);

    private StateFn? LexQuotedKey(char quote, StateFn self)
    {
        int r = Peek();
        if (r == quote)
        {
            Emit(ConfigTokenKind.Key);
            Next();
            return Skip(LexKeyEnd);
        }
        if (r == Eof)
        {
            return EndOfInput();
        }
        Next();
        return self;
    }

    private StateFn? LexKey()
    {
        int r = Peek();
        if (IsSpace(r))
        {
            return CheckKeyword(LexKeyEnd, null);
        }
        if (IsKeySeparator(r) || r == Eof)
        {
            Emit(ConfigTokenKind.Key);
            return LexKeyEnd;
        }
        Next();
        return LexKey;
    }

    /// <summary>A key followed by whitespace may be the <c>include</c> keyword.</summary>
    private StateFn CheckKeyword(StateFn keyEnd, StateFn? afterInclude)
    {
        if (_input.AsSpan(_start, _pos - _start).Equals("include", StringComparison.OrdinalIgnoreCase))
        {
            Ignore();
            if (afterInclude is not null)
            {
                Push(afterInclude);
            }
            return LexIncludeStart;
        }
        Emit(ConfigTokenKind.Key);
        return keyEnd;
    }

    private StateFn? LexKeyEnd()
    {
        int r = Next();
        if (IsSpace(r))
        {
            return Skip(LexKeyEnd);
        }
        if (IsKeySeparator(r))
        {
            return Skip(LexValue);
        }
        if (r == Eof)
        {
            EmitEof();
            return null;
        }
        Backup();
        return LexValue;
    }

    private StateFn? LexValue()
    {
        int r = Next();
        if (IsWhitespace(r))
        {
            return Skip(LexValue);
        }
        switch (r)
        {
            case '[':
                Ignore();
                Emit(ConfigTokenKind.ArrayStart);
                return LexArrayValue;
            case '{':
                Ignore();
                Emit(ConfigTokenKind.MapStart);
                return LexMapKeyStart;
            case '\'':
                Ignore();
                return LexSingleQuotedString;
            case '"':
                Ignore();
                _stringState = LexDoubleQuotedString;
                return LexDoubleQuotedString;
            case '-':
                return LexNegativeNumberStart;
            case '(':
                Ignore();
                return LexBlock;
            case '.':
                return Error("Floats must start with a digit");
        }
        if (IsDigit(r))
        {
            Backup();
            return LexNumberStart;
        }
        if (IsNewLine(r))
        {
            return Error("Expected value but found new line");
        }
        Backup();
        _stringState = LexString;
        return LexString;
    }

    private StateFn? LexComment()
    {
        int r = Peek();
        if (IsNewLine(r) || r == Eof)
        {
            Ignore();
            return Pop();
        }
        Next();
        return LexComment;
    }
}
