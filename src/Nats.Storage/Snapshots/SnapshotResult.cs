namespace Nats.Storage;

/// <summary>What a snapshot holds: the stream state when it started (messages and bytes as copied) and
/// how many consumers it includes.</summary>
internal sealed record SnapshotResult(StreamState State, int Consumers);
