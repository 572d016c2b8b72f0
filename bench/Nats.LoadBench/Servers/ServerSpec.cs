namespace Nats.LoadBench.Servers;

/// <summary>A server under test: a label and the command that starts it (before -a/-p/-c).</summary>
internal sealed record ServerSpec(string Label, string FileName, IReadOnlyList<string> Args, bool IsOurs)
{
    public static ServerSpec Parse(string label, string commandLine, bool isOurs)
    {
        var parts = commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        if (parts.Length == 0)
        {
            throw new ArgumentException($"empty command for {label}");
        }

        return new ServerSpec(label, parts[0], parts[1..], isOurs);
    }

    public override string ToString() => string.Join(' ', [FileName, .. Args]);
}
