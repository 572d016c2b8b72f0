namespace Nats.Server.Hosting;

/// <summary>JetStream cannot start with this configuration (Go's "Can't start JetStream: ..." fatal); the executable logs it as [FTL] and exits 1.</summary>
internal sealed class JetStreamStartException(string message) : InvalidOperationException(message);
