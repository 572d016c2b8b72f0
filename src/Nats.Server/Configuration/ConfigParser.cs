using System.Globalization;

namespace Nats.Server.Configuration;

/// <summary>
/// Builds the value tree of a nats-server configuration file: nested maps and arrays, size
/// suffixes, booleans, dates, <c>include</c> files (relative to the including file) and
/// <c>$variables</c> (block scoped, falling back to the environment, with cycle detection).
/// Every value keeps its file/line/column; a value stored under a key takes the key's position,
/// as in the Go server's pedantic mode, so errors point at the key.
/// </summary>
internal sealed class ConfigParser
{
    private const string EnvKey = "pk";

    private readonly string _file;
    private readonly string _baseDir;
    private readonly HashSet<string> _envReferences;
    private readonly List<object> _contexts = [];
    private readonly List<ConfigToken> _keys = [];
    private readonly Dictionary<string, ConfigValue> _mapping = new(StringComparer.Ordinal);

    private ConfigParser(string file, HashSet<string> envReferences)
    {
        _file = file;
        _baseDir = file.Length == 0 ? "" : Path.GetDirectoryName(file) ?? "";
        _envReferences = envReferences;
    }

    /// <summary>Parses text that did not come from a file (no include base, empty file name in positions).</summary>
    public static Dictionary<string, ConfigValue> Parse(string text) => Parse(text, "");

    /// <summary>Parses text as if read from <paramref name="file"/> (used for positions and include paths).</summary>
    public static Dictionary<string, ConfigValue> Parse(string text, string file) => Run(text, file, new HashSet<string>(StringComparer.Ordinal));

    public static Dictionary<string, ConfigValue> ParseFile(string path) => Run(ReadFile(path), path, new HashSet<string>(StringComparer.Ordinal));

    internal static string ReadFile(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            throw new ConfigurationException($"open {path}: no such file or directory");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new ConfigurationException($"open {path}: {e.Message}");
        }
    }

    private static Dictionary<string, ConfigValue> Run(string text, string file, HashSet<string> envReferences)
    {
        var parser = new ConfigParser(file, envReferences);
        parser._contexts.Add(parser._mapping);
        foreach (var token in ConfigLexer.Tokenize(text))
        {
            if (token.Kind == ConfigTokenKind.Eof)
            {
                break;
            }
            parser.Process(token);
        }
        return parser._mapping;
    }

    private object Context => _contexts[^1];

    private void Process(ConfigToken token)
    {
        switch (token.Kind)
        {
            case ConfigTokenKind.Error:
                throw Fail($"Parse error on line {token.Line}: '{token.Text}'");
            case ConfigTokenKind.Key:
                _keys.Add(token);
                break;
            case ConfigTokenKind.MapStart:
                _contexts.Add(new Dictionary<string, ConfigValue>(StringComparer.Ordinal));
                break;
            case ConfigTokenKind.MapEnd:
            case ConfigTokenKind.ArrayEnd:
                SetValue(Wrap(token, PopContext()));
                break;
            case ConfigTokenKind.ArrayStart:
                _contexts.Add(new List<ConfigValue>());
                break;
            case ConfigTokenKind.String:
                SetValue(Wrap(token, token.Text));
                break;
            case ConfigTokenKind.Integer:
                // Go stores nothing for an unrecognised suffix such as "4KBI" (the key is left pending), so the
                // file is still accepted; we do the same rather than reject what the Go server takes.
                if (ParseInteger(token) is long number)
                {
                    SetValue(Wrap(token, number));
                }
                break;
            case ConfigTokenKind.Float:
                if (!double.TryParse(token.Text, NumberStyles.Float, CultureInfo.InvariantCulture, out double d) || double.IsInfinity(d))
                {
                    throw Fail(token, $"float '{token.Text}' is out of the range");
                }
                SetValue(Wrap(token, d));
                break;
            case ConfigTokenKind.Bool:
                SetValue(Wrap(token, token.Text.ToLowerInvariant() is "true" or "yes" or "on"));
                break;
            case ConfigTokenKind.Datetime:
                if (!DateTime.TryParseExact(token.Text, "yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture,
                        DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var dt))
                {
                    throw Fail(token, $"expected Zulu formatted DateTime, but got '{token.Text}'");
                }
                SetValue(Wrap(token, dt));
                break;
            case ConfigTokenKind.Variable:
                SetValue(ResolveVariable(token));
                break;
            case ConfigTokenKind.Include:
                Include(token);
                break;
        }
    }

    private ConfigValue Wrap(ConfigToken token, object value) => new(value, _file, token.Line, token.Column);

    private object PopContext()
    {
        if (_contexts.Count <= 1)
        {
            throw Fail("Unexpected end of block");
        }
        var last = _contexts[^1];
        _contexts.RemoveAt(_contexts.Count - 1);
        return last;
    }

    private void SetValue(ConfigValue value)
    {
        switch (Context)
        {
            case List<ConfigValue> list:
                list.Add(value);
                break;
            case Dictionary<string, ConfigValue> map:
                if (_keys.Count == 0)
                {
                    throw Fail($"value on line {value.Line} has no key");
                }
                var key = _keys[^1];
                _keys.RemoveAt(_keys.Count - 1);
                value.Line = key.Line;
                value.Column = key.Column;
                map[key.Text] = value;
                break;
        }
    }

    private long? ParseInteger(ConfigToken token)
    {
        string text = token.Text;
        int digits = 0;
        while (digits < text.Length && (char.IsDigit(text[digits]) || text[digits] == '-'))
        {
            digits++;
        }
        if (!long.TryParse(text.AsSpan(0, digits), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n))
        {
            string number = text[..digits];
            bool overflow = number.TrimStart('-').Length > 0 && number.LastIndexOf('-') <= 0 && number.TrimStart('-').All(char.IsAsciiDigit);
            throw Fail(token, overflow ? $"integer '{text}' is out of the range" : $"expected integer, but got '{text}'");
        }
        long? multiplier = text[digits..].Trim().ToLowerInvariant() switch
        {
            "" => 1,
            "k" => 1000L,
            "kb" or "ki" or "kib" => 1L << 10,
            "m" => 1000L * 1000,
            "mb" or "mi" or "mib" => 1L << 20,
            "g" => 1000L * 1000 * 1000,
            "gb" or "gi" or "gib" => 1L << 30,
            "t" => 1000L * 1000 * 1000 * 1000,
            "tb" or "ti" or "tib" => 1L << 40,
            "p" => 1000L * 1000 * 1000 * 1000 * 1000,
            "pb" or "pi" or "pib" => 1L << 50,
            "e" => 1000L * 1000 * 1000 * 1000 * 1000 * 1000,
            "eb" or "ei" or "eib" => 1L << 60,
            _ => null,
        };
        if (multiplier is null)
        {
            return null;
        }
        // Go multiplies int64 without overflow checks; keep the same wrap-around result.
        return unchecked(n * multiplier.Value);
    }

    private ConfigValue ResolveVariable(ConfigToken token)
    {
        string name = token.Text;
        // A bcrypt hash ("$2a$...") is a literal, so passwords need no quoting.
        if (name.StartsWith("2a$", StringComparison.Ordinal))
        {
            return Wrap(token, "$" + name);
        }
        for (int i = _contexts.Count - 1; i >= 0; i--)
        {
            if (_contexts[i] is Dictionary<string, ConfigValue> map && map.TryGetValue(name, out var found))
            {
                found.UsedAsVariable = true;
                return Wrap(token, found.Value);
            }
        }
        if (!_envReferences.Add(name))
        {
            throw Fail($"variable reference for '{name}' on line {token.Line} could not be parsed: variable reference cycle for '{name}'");
        }
        try
        {
            string? env = Environment.GetEnvironmentVariable(name);
            if (env is null)
            {
                throw Fail($"variable reference for '{name}' on line {token.Line} can not be found");
            }
            Dictionary<string, ConfigValue> parsed;
            try
            {
                parsed = Run($"{EnvKey}={env}", "", _envReferences);
            }
            catch (ConfigurationException e)
            {
                throw Fail($"variable reference for '{name}' on line {token.Line} could not be parsed: {e.Message}");
            }
            return parsed.TryGetValue(EnvKey, out var value)
                ? Wrap(token, value.Value)
                : throw Fail($"variable reference for '{name}' on line {token.Line} can not be found");
        }
        finally
        {
            _envReferences.Remove(name);
        }
    }

    private void Include(ConfigToken token)
    {
        string path = _baseDir.Length == 0 ? token.Text : _baseDir + "/" + token.Text.TrimStart('/');
        Dictionary<string, ConfigValue> included;
        try
        {
            included = Run(ReadFile(path), path, new HashSet<string>(StringComparer.Ordinal));
        }
        catch (ConfigurationException e)
        {
            throw Fail($"error parsing include file '{token.Text}', {e.Message}");
        }
        foreach (var (key, value) in included)
        {
            _keys.Add(new ConfigToken(ConfigTokenKind.Key, key, value.Line, value.Column));
            SetValue(value);
        }
    }

    private ConfigurationException Fail(string message) =>
        new(_file.Length == 0 ? message : $"{_file}: {message}");

    private ConfigurationException Fail(ConfigToken token, string message) =>
        new(_file.Length == 0 ? message : $"{_file}:{token.Line}:{token.Column}: {message}");
}
