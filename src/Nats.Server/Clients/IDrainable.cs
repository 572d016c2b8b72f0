namespace Nats.Server.Clients;

/// <summary>
/// A subscriber a publisher can be paused on (see <see cref="StallList"/>): a client's delivery, or an
/// MQTT connection whose outbound packets a publisher filled past the stall threshold.
/// </summary>
internal interface IDrainable
{
    /// <summary>
    /// Completes once the subscriber has drained enough for the publisher to go on, or has been cut as
    /// a slow consumer because it wrote nothing for the stuck bound. Never blocks a thread.
    /// </summary>
    ValueTask WaitUntilDrainedAsync();
}
