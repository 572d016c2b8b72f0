namespace Nats.Server.Delivery;

/// <summary>
/// How a JetStream consumer's delivery crosses a route, leaf or gateway connection (Go's processMsgResults): it is
/// matched on the deliver subject or pull inbox but shown under the stored message's subject, and a peer only
/// matches, so the message travels on the deliver subject with the shown subject appended to its ack reply
/// (<c>$JS.ACK.…@orders.new</c>); the receiving server splits the reply again before its clients see it.
/// </summary>
internal static class JetStreamDelivery
{
    private static ReadOnlySpan<byte> AckPrefix => "$JS.ACK."u8;

    /// <summary>
    /// Splits a peer's reply <c>$JS.ACK.…@subject</c> into the subject to show and the ack reply. False for any other
    /// reply (a client's own '@' stays as it is: only <c>$JS.ACK.</c> replies are rewritten, as in Go).
    /// </summary>
    public static bool TrySplit(ReadOnlySpan<byte> reply, out ReadOnlySpan<byte> subject, out ReadOnlySpan<byte> ackReply)
    {
        subject = default;
        ackReply = reply;
        if (!reply.StartsWith(AckPrefix))
        {
            return false;
        }
        var at = reply.LastIndexOf((byte)'@');
        if (at < 0 || at == reply.Length - 1)
        {
            return false;
        }
        subject = reply[(at + 1)..];
        ackReply = reply[..at];
        return true;
    }

    /// <summary>Writes <c>reply@subject</c> into <paramref name="scratch"/> (grown when short) and returns its length.</summary>
    public static int Join(ReadOnlySpan<byte> reply, ReadOnlySpan<byte> subject, ref byte[] scratch)
    {
        var length = reply.Length + 1 + subject.Length;
        if (scratch.Length < length)
        {
            scratch = new byte[Math.Max(length, scratch.Length * 2)];
        }
        reply.CopyTo(scratch);
        scratch[reply.Length] = (byte)'@';
        subject.CopyTo(scratch.AsSpan(reply.Length + 1));
        return length;
    }
}
