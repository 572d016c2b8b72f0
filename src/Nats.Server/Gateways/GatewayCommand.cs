namespace Nats.Server.Gateways;

/// <summary>An INFO's gateway_cmd (Go's gatewayCmd* codes): the gossip of another gateway and the interest-only switch.</summary>
internal static class GatewayCommand
{
    public const byte Gossip = 1;
    public const byte AllSubsStart = 2;
    public const byte AllSubsComplete = 3;
}
