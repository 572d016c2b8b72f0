namespace Nats.Server.Configuration;

// Array and map states.
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
}
