namespace Nats.LoadBench.Servers;

/// <summary>How the servers of a multi-server row are joined.</summary>
internal enum ClusterLink
{
    /// <summary>One cluster: every server lists every other in <c>cluster { routes }</c>.</summary>
    Routes,

    /// <summary>Two single-server clusters, A (server 0) and B (server 1), each listing the other in <c>gateway { gateways }</c>.</summary>
    Gateway,

    /// <summary>Server 0 is the hub (<c>leafnodes { listen }</c>), server 1 its leaf (<c>leafnodes { remotes }</c>).</summary>
    HubThenLeaf,

    /// <summary>Server 0 is the leaf, server 1 its hub: a row's publisher (on server 0) is then on the leaf.</summary>
    LeafThenHub,
}
