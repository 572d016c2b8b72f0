namespace Nats.LoadBench.Kit;

/// <summary>A run that cannot produce a figure: messages lost, a connection cut, a server error.</summary>
internal sealed class RowFailedException(string message, Exception? inner = null) : Exception(message, inner);
