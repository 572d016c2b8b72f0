namespace Nats.Server.Configuration;

/// <summary>
/// A parsed configuration value with the place it came from, so binders can report errors as
/// "file:line:column: reason" like the Go server. <see cref="Value"/> is one of: string, bool, long,
/// double, DateTime (UTC), <see cref="List{T}"/> of ConfigValue, or <see cref="Dictionary{TKey,TValue}"/>
/// of string to ConfigValue (keys case-sensitive, in file order).
/// </summary>
internal sealed class ConfigValue
{
    public ConfigValue(object value, string file, int line, int column)
    {
        Value = value;
        File = file;
        Line = line;
        Column = column;
    }

    public object Value { get; }

    public string File { get; }

    public int Line { get; internal set; }

    public int Column { get; internal set; }

    /// <summary>True when some $reference resolved to this value; such keys are variable definitions, not unknown fields.</summary>
    public bool UsedAsVariable { get; internal set; }

    public string Source => $"{File}:{Line}:{Column}";

    public Dictionary<string, ConfigValue>? AsMap => Value as Dictionary<string, ConfigValue>;

    public List<ConfigValue>? AsList => Value as List<ConfigValue>;

    /// <summary>The Go type name of the value, used in error texts that mirror Go's.</summary>
    public string GoTypeName => GoConfigText.TypeName(Value);

    /// <summary>Converts to plain CLR objects (nested lists and dictionaries), dropping positions.</summary>
    public object ToPlain() => Value switch
    {
        List<ConfigValue> list => list.Select(v => v.ToPlain()).ToList(),
        Dictionary<string, ConfigValue> map => map.ToDictionary(kv => kv.Key, kv => kv.Value.ToPlain(), StringComparer.Ordinal),
        _ => Value,
    };

    public override string ToString() => $"{Value} ({Source})";
}
