namespace Nats.Server.Configuration;

/// <summary>
/// The loop every block binder runs over its keys, as Go's parse functions do: keys are matched
/// lower-cased, a key the binder does not know is an error ("unknown field \"k\"", at the value) unless
/// it is a $variable definition, and a <see cref="ConfigBindException"/> from one key is recorded and
/// the next key bound, so one pass reports every problem.
/// </summary>
internal static class ConfigBlock
{
    /// <summary>Binds one key; <paramref name="key"/> is lower-cased. Returns false for a key the block does not have.</summary>
    public delegate bool KeyBinder(string key, ConfigValue value);

    /// <summary>Runs <paramref name="bind"/> over the entries of <paramref name="block"/> in file order.</summary>
    public static void ForEach(Dictionary<string, ConfigValue> block, List<string> errors, KeyBinder bind)
    {
        foreach (var (key, value) in block)
        {
            try
            {
                if (!bind(key.ToLowerInvariant(), value))
                {
                    Unknown(key, value, errors);
                }
            }
            catch (ConfigBindException e)
            {
                errors.Add(e.Message);
            }
        }
    }

    /// <summary>Go's unknownConfigFieldErr for <paramref name="key"/> (as written), skipped for $variable definitions.</summary>
    public static void Unknown(string key, ConfigValue value, List<string> errors)
    {
        if (!value.UsedAsVariable)
        {
            errors.Add($"{value.Source}: {GoConfigText.UnknownField(key)}");
        }
    }
}
