namespace Nats.Storage;

/// <summary>What a snapshot holds: the stream state when it started (messages and bytes as copied) and
/// how many consumers it includes.</summary>
public sealed record SnapshotResult(StreamState State, int Consumers);
