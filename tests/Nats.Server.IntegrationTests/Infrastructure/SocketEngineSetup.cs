using System.Runtime.CompilerServices;
using Nats.Server.Hosting;

namespace Nats.Server.IntegrationTests.Infrastructure;

internal static class SocketEngineSetup
{
    /// <summary>In-process servers run with the same socket engine settings as the executable.</summary>
    [ModuleInitializer]
    internal static void Apply() => SocketEngineSettings.ApplyBeforeFirstSocket();
}
