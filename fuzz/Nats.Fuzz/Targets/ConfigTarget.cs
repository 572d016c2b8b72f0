using System.Text;
using Nats.Server.Configuration;

namespace Nats.Fuzz.Targets;

/// <summary>
/// The configuration lexer and parser on a file's text. Oracle: a value tree or a <see cref="ConfigurationException"/>,
/// nothing else. The text is parsed as if it were a file in a scratch directory holding one small include file, so
/// relative includes are exercised without reaching into the machine.
/// </summary>
internal static class ConfigTarget
{
    private static readonly Lazy<string> Directory = new(CreateDirectory);

    public static void Run(ReadOnlySpan<byte> input)
    {
        var text = Encoding.UTF8.GetString(input);
        // Absolute includes would read the machine's files (a device or a FIFO never ends).
        if (text.Contains("/dev", StringComparison.Ordinal) || text.Contains("/proc", StringComparison.Ordinal) || text.Contains("/sys", StringComparison.Ordinal))
        {
            return;
        }
        try
        {
            ConfigParser.Parse(text, Path.Combine(Directory.Value, "input.conf"));
        }
        catch (ConfigurationException)
        {
        }
    }

    private static string CreateDirectory()
    {
        var directory = Path.Combine(Path.GetTempPath(), $"nats-fuzz-config-{Environment.ProcessId}");
        System.IO.Directory.CreateDirectory(directory);
        File.WriteAllText(Path.Combine(directory, "inc.conf"), "port: 4222\nauthorization { user: a, password: b }\n");
        return directory;
    }
}
