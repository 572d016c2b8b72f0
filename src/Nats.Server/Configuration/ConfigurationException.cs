namespace Nats.Server.Configuration;

/// <summary>
/// A configuration file could not be read, parsed or bound. <see cref="Exception.Message"/> is the
/// text to show the operator; for binding problems it lists warnings then errors, one per line,
/// each starting with "file:line:column:" (the Go server's processConfigErr shape).
/// </summary>
public sealed class ConfigurationException : Exception
{
    public ConfigurationException(string message)
        : base(message)
    {
        Errors = [message];
        Warnings = [];
    }

    public ConfigurationException(IReadOnlyList<string> errors, IReadOnlyList<string> warnings)
        : base(Format(errors, warnings))
    {
        Errors = errors;
        Warnings = warnings;
    }

    public IReadOnlyList<string> Errors { get; }

    public IReadOnlyList<string> Warnings { get; }

    private static string Format(IReadOnlyList<string> errors, IReadOnlyList<string> warnings)
    {
        var lines = new List<string>(warnings.Count + errors.Count);
        lines.AddRange(warnings);
        lines.AddRange(errors);
        return string.Join('\n', lines);
    }
}
