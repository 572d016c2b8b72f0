namespace Nats.LoadBench.Servers;

/// <summary>A server under test: a label and the command that starts it (before -a/-p/-c).</summary>
internal sealed record ServerSpec(string Label, string FileName, IReadOnlyList<string> Args, bool IsOurs)
{
    /// <summary>The command as the user gave it, for reports (paths stay repository-relative).</summary>
    public string Display { get; private init; } = "";

    public static ServerSpec Parse(string label, string commandLine, bool isOurs)
    {
        var parts = commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        if (parts.Length == 0)
        {
            throw new ArgumentException($"empty command for {label}");
        }

        // The server runs inside its temp directory, so relative paths are pinned to ours now.
        for (int i = 0; i < parts.Length; i++)
        {
            if (!Path.IsPathRooted(parts[i]) && File.Exists(parts[i]))
            {
                parts[i] = Path.GetFullPath(parts[i]);
            }
        }

        return new ServerSpec(label, parts[0], parts[1..], isOurs) { Display = commandLine.Trim() };
    }

    public override string ToString() => Display;
}
