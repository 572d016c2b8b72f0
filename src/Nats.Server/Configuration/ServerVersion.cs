namespace Nats.Server.Configuration;

/// <summary>The one place version strings live.</summary>
internal static class ServerVersion
{
    /// <summary>The Go server feature level we implement and report in INFO "version" (clients gate features on it).</summary>
    public const string ProtocolVersion = "2.9.10";

    /// <summary>Our own build version: the project's Version property, compiled in as a constant (BuildInfo.g.cs, see
    /// Nats.Server.csproj) rather than read from the assembly's informational-version attribute, which in the Native
    /// AOT binary ran custom-attribute reflection at every startup.</summary>
    public static string BuildVersion => BuildInfo.Version;
}
