using System.Collections;
using System.Globalization;
using System.Text;

namespace Nats.Server.Configuration;

/// <summary>
/// The Go texts config errors are made of: the runtime panic of a failed type assertion (Go reports it as
/// the error), %T type names, %v values and %q field names, for <see cref="ConfigValue"/>s and for the
/// plain trees <see cref="ConfigValue.ToPlain"/> gives.
/// </summary>
internal static class GoConfigText
{
    /// <summary>What Go says when <c>v.(T)</c> fails on a value of Go type <paramref name="actualGoType"/>.</summary>
    public static string InterfaceConversion(string actualGoType, string expected) =>
        $"interface conversion: interface {{}} is {actualGoType}, not {expected}";

    /// <summary>Go's %T of a config value: string, bool, int64, float64, time.Time, []interface {}, map[string]interface {}.</summary>
    public static string TypeName(object? value) => value switch
    {
        ConfigValue c => TypeName(c.Value),
        string => "string",
        bool => "bool",
        long => "int64",
        double => "float64",
        DateTime => "time.Time",
        IList => "[]interface {}",
        IDictionary => "map[string]interface {}",
        null => "nil",
        _ => value.GetType().Name,
    };

    /// <summary>Go's %v of a scalar config value; lists and maps are abbreviated (no error text prints their content).</summary>
    public static string Value(object? value) => value switch
    {
        ConfigValue c => Value(c.Value),
        bool b => b ? "true" : "false",
        double d => d.ToString("R", CultureInfo.InvariantCulture),
        DateTime t => t.ToString("yyyy-MM-dd HH:mm:ss +0000 UTC", CultureInfo.InvariantCulture),
        IList => "[...]",
        IDictionary => "map[...]",
        _ => Convert.ToString(value, CultureInfo.InvariantCulture) ?? "<nil>",
    };

    /// <summary>Go's %q of a string.</summary>
    public static string Quote(string text) => Auth.GoQuote.Quote(Encoding.UTF8.GetBytes(text));

    /// <summary>Go's unknownConfigFieldErr text, the same in every block.</summary>
    public static string UnknownField(string key) => $"unknown field {Quote(key)}";
}
