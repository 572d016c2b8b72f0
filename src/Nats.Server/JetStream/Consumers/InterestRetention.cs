namespace Nats.Server.JetStream.Consumers;

/// <summary>Interest retention when a consumer goes away (Go's stopWithFlags with dflag on an interest stream).</summary>
internal static class InterestRetention
{
    /// <summary>From the deleted consumer's ack floor (at least the stream's first sequence) to the last
    /// sequence, removes every message no remaining consumer still needs; below that floor nothing changes,
    /// as in Go.</summary>
    public static void AfterDelete(JsStream stream, JsConsumer deleted, JsConsumer[] remaining)
    {
        var store = stream.Store;
        var state = store.FastState();
        var start = Math.Max(deleted.AckFloorStream, state.FirstSeq);
        if (state.Msgs == 0)
        {
            return;
        }
        for (var seq = start; seq <= state.LastSeq; seq++)
        {
            var subject = store.SubjectForSeq(seq);
            if (subject is null)
            {
                continue;
            }
            var needed = false;
            foreach (var consumer in remaining)
            {
                if (consumer.NeedsAck(seq, subject))
                {
                    needed = true;
                    break;
                }
            }
            if (!needed)
            {
                stream.RemoveMsg(seq, erase: false);
            }
        }
    }
}
