namespace Nats.Fuzz;

/// <summary>Runs saved inputs through a target outside afl, so a finding shows its exception and stack trace.</summary>
internal static class Replay
{
    public static int Run(FuzzTarget target, ReadOnlySpan<string> paths)
    {
        var files = new List<string>();
        foreach (var path in paths)
        {
            if (Directory.Exists(path))
            {
                files.AddRange(Directory.GetFiles(path).Order(StringComparer.Ordinal));
            }
            else
            {
                files.Add(path);
            }
        }
        var failed = 0;
        foreach (var file in files)
        {
            try
            {
                target(File.ReadAllBytes(file));
            }
            catch (Exception e)
            {
                failed++;
                Console.WriteLine($"FAIL {file}: {e}");
            }
        }
        Console.WriteLine($"{files.Count - failed} inputs passed, {failed} failed");
        return failed == 0 ? 0 : 1;
    }
}
