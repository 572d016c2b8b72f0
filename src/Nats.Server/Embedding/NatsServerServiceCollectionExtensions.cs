using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Nats.Server.Embedding;

// The conventional namespace for AddXxx extensions, so they show up wherever services are configured.
namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers an embedded NATS server as a hosted service of the generic host (ASP.NET Core, workers, tests).</summary>
public static class NatsServerServiceCollectionExtensions
{
    /// <summary>
    /// Adds a <see cref="NatsServerHost"/> singleton (inject it for <see cref="NatsServerHost.ClientUrl"/> and
    /// <see cref="NatsServerHost.WaitUntilReadyAsync"/>) started and stopped with the host. It logs through the
    /// container's <see cref="ILoggerFactory"/> unless the options name another. The options can also be bound from
    /// configuration with <c>services.Configure&lt;NatsServerHostOptions&gt;(section)</c>.
    /// </summary>
    public static IServiceCollection AddNatsServer(this IServiceCollection services, Action<NatsServerHostOptions>? configure = null)
    {
        var options = services.AddOptions<NatsServerHostOptions>();
        if (configure is not null)
        {
            options.Configure(configure);
        }
        services.TryAddSingleton(provider => new NatsServerHost(
            provider.GetRequiredService<IOptions<NatsServerHostOptions>>().Value,
            provider.GetService<ILoggerFactory>()));
        // Calling AddNatsServer twice configures the one server; it must not be started twice.
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, NatsServerHostedService>());
        return services;
    }
}
