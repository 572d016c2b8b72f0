namespace Nats.Server.Clients;

/// <summary>
/// The connection an <see cref="OutboundQueue"/> writes for (a client or a route): told when the
/// transport fails and when the write side makes progress. Called per write, never per message.
/// </summary>
internal interface IOutboundOwner
{
    /// <summary>A send failed: the connection ends (nothing queued can be written any more).</summary>
    void OnWriteError();

    /// <summary>The write side made progress.</summary>
    void NoteWriteActivity();

    /// <summary>The write loop failed unexpectedly: log it and end the connection.</summary>
    void OnWriteLoopFailed(Exception exception);
}
