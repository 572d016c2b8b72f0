namespace Nats.LoadBench.Client;

/// <summary>Raised when a scenario cannot get going (port closed, feature refused, API silent).
/// For our server this means "not implemented"; for Go it is a harness error.</summary>
internal sealed class SetupException(string message, Exception? inner = null) : Exception(message, inner);
