using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>
/// When a stored message may be acknowledged. The one place the publish path waits for the store, so
/// the group-commit ticket of the durable store can replace today's policy without touching streams.
/// </summary>
internal interface IStreamDurability
{
    /// <summary>Completes once <paramref name="seq"/> of <paramref name="store"/> is as durable as the policy promises.</summary>
    ValueTask WhenDurable(IStreamStore store, ulong seq);
}

/// <summary>
/// Today's policy: the file store hands every record to the operating system before StoreMsg returns
/// (a killed process loses nothing acknowledged), and with sync always it fsyncs before returning too.
/// So the message is durable when the store call returned.
/// </summary>
internal sealed class StoreReturnDurability : IStreamDurability
{
    public static readonly StoreReturnDurability Instance = new();

    public ValueTask WhenDurable(IStreamStore store, ulong seq) => ValueTask.CompletedTask;
}
