namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>Locates the repository from the test assembly, so scripts are read from the source tree, not copied.</summary>
internal static class RepoPaths
{
    private static readonly Lazy<string> _root = new(FindRoot);

    public static string Root => _root.Value;

    public static string DifferentialScripts => Path.Combine(Root, "tests", "Nats.Server.IntegrationTests", "Differential", "Scripts");

    public static string JsScenarios => Path.Combine(Root, "tests", "js");

    private static string FindRoot()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir is not null)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Nats.slnx")))
            {
                return dir.FullName;
            }

            dir = dir.Parent;
        }

        throw new InvalidOperationException($"Nats.slnx not found above {AppContext.BaseDirectory}");
    }
}
