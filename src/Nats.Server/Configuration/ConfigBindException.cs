namespace Nats.Server.Configuration;

/// <summary>
/// The one exception of config binding: a value could not be bound. <see cref="Exception.Message"/> is
/// the operator's text, "file:line:col: reason" when the position is known (Go's configErr shape).
/// Binders throw it from a key and catch it where Go would go on with the next key, adding the message
/// to the error list; it never leaves binding (callers see <see cref="ConfigurationException"/>).
/// </summary>
internal sealed class ConfigBindException : Exception
{
    public ConfigBindException(ConfigValue at, string reason)
        : base($"{at.Source}: {reason}")
    {
        Position = at.Source;
        Reason = reason;
    }

    /// <summary>A reason whose position the catcher decides (Go reports some at the last token read, not the value).</summary>
    public ConfigBindException(string reason)
        : base(reason) => Reason = reason;

    /// <summary>"file:line:col", or null when the catcher positions the reason.</summary>
    public string? Position { get; }

    /// <summary>The text after the position.</summary>
    public string Reason { get; }
}
