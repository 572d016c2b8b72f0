namespace Nats.Server.Hosting;

/// <summary>
/// Another process (or another server in this one) holds the JetStream store directory: two servers
/// writing one store would interleave sequences and corrupt each other's blocks. The executable logs
/// the message as [FTL] and exits 1.
/// </summary>
public sealed class StoreDirectoryLockedException(string message, Exception? inner = null) : IOException(message, inner);
