using Nats.Server.Configuration;

namespace Nats.Server.Gateways;

/// <summary>Go's validateCluster (the gateway name is the cluster name) and validateGatewayOptions, in Go's wording.</summary>
internal static class GatewayValidation
{
    public static string? Validate(ServerOptions options)
    {
        var gateway = options.Gateway;
        if (!string.IsNullOrEmpty(gateway.Name) && gateway.Name != options.Cluster.Name)
        {
            if (!string.IsNullOrEmpty(options.Cluster.Name))
            {
                return "cluster name conflicts between cluster and gateway definitions";
            }
            // Set here so that the cluster name is not dynamic.
            options.Cluster.Name = gateway.Name;
        }
        if (string.IsNullOrEmpty(gateway.Name) && gateway.Port == 0)
        {
            return null;
        }
        if (string.IsNullOrEmpty(gateway.Name))
        {
            return "gateway has no name";
        }
        if (gateway.Port == 0)
        {
            return $"gateway \"{gateway.Name}\" has no port specified (select -1 for random port)";
        }
        for (var i = 0; i < gateway.Gateways.Count; i++)
        {
            var remote = gateway.Gateways[i];
            if (string.IsNullOrEmpty(remote.Name))
            {
                return $"gateway in the list {i} has no name";
            }
            if (remote.Urls.Count == 0)
            {
                return $"gateway \"{remote.Name}\" has no URL";
            }
        }
        return null;
    }
}
