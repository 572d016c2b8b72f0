using Microsoft.Extensions.Logging;

namespace Nats.Server.Logging;

/// <summary>
/// The executable's <see cref="ILoggerFactory"/>: every category goes to the one <see cref="GoStyleLoggerProvider"/>,
/// which applies Go's level flags and output format itself.
/// </summary>
/// <remarks>
/// Microsoft.Extensions.Logging's LoggerFactory would add nothing here (no filter rules, one provider), but it
/// reads the provider's alias attribute through reflection for every logger it creates; in the Native AOT binary
/// that kept the custom-attribute and reflection code paged in for an idle server. An embedding host still brings
/// its own factory (NatsServerHostOptions.LoggerFactory).
/// </remarks>
internal sealed class GoStyleLoggerFactory(GoStyleLoggerProvider provider) : ILoggerFactory
{
    public ILogger CreateLogger(string categoryName) => provider.CreateLogger(categoryName);

    /// <summary>Output goes to the Go-style provider only.</summary>
    public void AddProvider(ILoggerProvider provider) =>
        throw new NotSupportedException("The server's log output is configured by its options (log_file, debug, trace).");

    /// <summary>The provider belongs to <see cref="ServerLogging"/>, which disposes it.</summary>
    public void Dispose()
    {
    }
}
