using System.Reflection;

namespace Nats.Server.Configuration;

/// <summary>The one place version strings live.</summary>
internal static class ServerVersion
{
    /// <summary>The Go server feature level we implement and report in INFO "version" (clients gate features on it).</summary>
    public const string ProtocolVersion = "2.9.10";

    /// <summary>Our own build version, from the assembly's informational version (without any "+commit" suffix).</summary>
    public static string BuildVersion { get; } = ReadBuildVersion();

    private static string ReadBuildVersion()
    {
        var info = typeof(ServerVersion).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
        if (string.IsNullOrEmpty(info))
        {
            return typeof(ServerVersion).Assembly.GetName().Version?.ToString(3) ?? "0.0.0";
        }
        int plus = info.IndexOf('+');
        return plus >= 0 ? info[..plus] : info;
    }
}
