using System.Collections;
using System.Text;
using Nats.Server.Configuration;

namespace Nats.Server.Mappings;

/// <summary>
/// Binds a <c>mappings</c> (or <c>maps</c>) block, top level or inside an account, the way Go 2.9.10's
/// parseAccountMappings / parseAccountMapDest do, with the same error texts. Every mapping is also
/// compiled so invalid destinations are reported at load time, as <c>nats-server -t</c> does.
/// </summary>
internal static class MappingConfigBinder
{
    /// <summary>
    /// Binds <paramref name="block"/>: a <see cref="ConfigValue"/> (errors then carry "file:line:col: "
    /// like other config errors) or the plain tree <see cref="ConfigValue.ToPlain"/> gives (errors without
    /// a position; the caller may prefix its own). Errors are appended to <paramref name="errors"/>; the
    /// mappings that bound cleanly are returned.
    /// </summary>
    public static List<SubjectMapping> Bind(object block, List<string> errors)
    {
        var result = new List<SubjectMapping>();
        var state = new State(errors, Source(block));
        try
        {
            var map = state.Unwrap(block) as IDictionary
                ?? throw State.Panic(block, "map[string]interface {}");
            foreach (DictionaryEntry item in map)
            {
                var subject = (string)item.Key;
                var value = item.Value!;
                if (!Subscriptions.SubjectValidation.IsValidSubject(Encoding.UTF8.GetBytes(subject)))
                {
                    state.Error(state.BlockSource, $"Subject {Quote(subject)} is not a valid subject");
                    continue;
                }
                var raw = state.Unwrap(value);
                var valueSource = Source(value);
                switch (raw)
                {
                    case string destination:
                        if (TryCompile(new SubjectMapping(subject, destination), out var error))
                        {
                            result.Add(new SubjectMapping(subject, destination));
                        }
                        else
                        {
                            state.Error(valueSource, $"Error adding mapping for {Quote(subject)} to {Quote(destination)} : {error}");
                        }
                        break;
                    case IList list:
                        var destinations = new List<MappingDestination>();
                        foreach (var element in list)
                        {
                            if (BindDestination(state, element!, state.Unwrap(element!), Source(element!)) is { } d)
                            {
                                destinations.Add(d);
                            }
                        }
                        AddWeighted(state, result, new SubjectMapping(subject, destinations), raw);
                        break;
                    default:
                        if (BindDestination(state, value, raw, valueSource) is { } single)
                        {
                            AddWeighted(state, result, new SubjectMapping(subject, [single]), raw);
                        }
                        break;
                }
            }
        }
        catch (ConfigBindException panic)
        {
            // Go recovers the panic, reports it at the last token read and abandons the rest of the block.
            state.Error(state.LastSource, panic.Reason);
        }
        return result;
    }

    private static void AddWeighted(State state, List<SubjectMapping> result, SubjectMapping mapping, object? raw)
    {
        if (TryCompile(mapping, out _))
        {
            result.Add(mapping);
            return;
        }
        // Go formats this error with v.(string) on a list or map value, which panics instead.
        throw State.Panic(raw, "string");
    }

    private static bool TryCompile(SubjectMapping mapping, out string error)
    {
        try
        {
            SubjectMapper.Compile(mapping);
            error = "";
            return true;
        }
        catch (MappingException e)
        {
            error = e.Message;
            return false;
        }
    }

    /// <summary>Go's parseAccountMapDest: a map with destination/dest, weight and cluster.</summary>
    private static MappingDestination? BindDestination(State state, object value, object? raw, string? source)
    {
        if (raw is not IDictionary fields)
        {
            state.Error(source, "Expected an entry for the mapping destination");
            return null;
        }
        string subject = "", cluster = "";
        int? weight = null;
        foreach (DictionaryEntry field in fields)
        {
            var key = (string)field.Key;
            var fieldValue = field.Value!;
            var fieldRaw = fieldValue is ConfigValue c ? c.Value : fieldValue;
            var fieldSource = Source(fieldValue);
            switch (key.ToLowerInvariant())
            {
                case "dest":
                case "destination":
                    subject = fieldRaw as string ?? throw State.Panic(fieldRaw, "string");
                    break;
                case "cluster":
                    cluster = fieldRaw as string ?? throw State.Panic(fieldRaw, "string");
                    break;
                case "weight":
                    switch (fieldRaw)
                    {
                        case string text:
                            var trimmed = text.EndsWith('%') ? text[..^1] : text;
                            if (!DestinationToken.GoAtoi(trimmed, out var parsed))
                            {
                                state.Error(fieldSource, $"Invalid weight {Quote(trimmed)} for mapping destination");
                                return null;
                            }
                            if (parsed is > 100 or < 0)
                            {
                                state.Error(fieldSource, $"Invalid weight {parsed} for mapping destination");
                                return null;
                            }
                            weight = (int)parsed;
                            break;
                        case long number:
                            if (number is > 100 or < 0)
                            {
                                state.Error(fieldSource, $"Invalid weight {number} for mapping destination");
                                return null;
                            }
                            weight = (int)number;
                            break;
                        default:
                            state.Error(fieldSource, $"Unknown entry type for weight of {GoConfigText.Value(fieldRaw)}\n");
                            return null;
                    }
                    break;
                default:
                    state.Error(fieldSource, $"Unknown field {Quote(key)} for mapping destination");
                    return null;
            }
        }
        if (weight is null)
        {
            state.Error(source, $"Missing weight for mapping destination {Quote(subject)}");
            return null;
        }
        return new MappingDestination(subject, weight.Value, cluster);
    }

    private static string Quote(string text) => GoConfigText.Quote(text);

    private static string? Source(object value) => (value as ConfigValue)?.Source;

    private sealed class State(List<string> errors, string? blockSource)
    {
        public string? BlockSource { get; } = blockSource;

        /// <summary>
        /// The position of the last block-level value read (a mapping's value or a list element), where Go
        /// reports a recovered panic; fields inside a destination map do not move it (Go tracks those separately).
        /// </summary>
        public string? LastSource { get; private set; } = blockSource;

        public object? Unwrap(object value)
        {
            if (value is ConfigValue config)
            {
                LastSource = config.Source;
                return config.Value;
            }
            return value;
        }

        public void Error(string? source, string message) =>
            errors.Add(source is null ? message : $"{source}: {message}");

        /// <summary>The runtime panic of a failed Go type assertion, positioned where it is caught.</summary>
        public static ConfigBindException Panic(object? actual, string expected) =>
            new(GoConfigText.InterfaceConversion(GoConfigText.TypeName(actual), expected));
    }
}
