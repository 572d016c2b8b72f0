using Nats.Server.Accounts;

namespace Nats.Server.Mqtt;

/// <summary>
/// One MQTT publish going into its account (Go's mqttInitiateMsgDelivery): the NATS message for NATS subscribers
/// and QoS 0 deliveries, and for QoS 1/2 the copy in <c>$MQTT_msgs</c> that the subscriptions' consumers deliver.
/// A shared subscription group gets the message from one of the two only: the stored copy names each group whose
/// NATS queue draw went to a NATS or QoS 0 member (<c>Nmqtt-Taken: &lt;group&gt; &lt;subject&gt;</c>), and that
/// group's consumer settles it without sending; a draw that went to a QoS 1/2 member leaves it to the consumer.
/// </summary>
internal sealed class MqttLivePublisher(MqttJetStream js)
{
    private static ReadOnlySpan<byte> TakenName => "Nmqtt-Taken:"u8;

    private byte[] _storeScratch = new byte[256];
    private byte[] _headerScratch = [];
    private byte[] _takenScratch = [];

    /// <summary>The <c>Nmqtt-Taken</c> line a stored message carries for <paramref name="group"/> and <paramref name="subject"/>, with its leading LF.</summary>
    public static byte[] TakenLine(string group, string subject) => System.Text.Encoding.UTF8.GetBytes("\nNmqtt-Taken:" + group + " " + subject + "\r\n");

    /// <summary>Publishes; false when the QoS 1/2 copy found no stream (then no store acknowledgement comes to <paramref name="storeReply"/>).</summary>
    /// <remarks><paramref name="lines"/>: an MQTT 5 publish's properties as header lines (MqttV5Headers), empty for 3.1.1.</remarks>
    public bool Publish(MqttSession session, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload, byte qos, bool retain, ReadOnlySpan<byte> lines,
        ReadOnlySpan<byte> storeReply)
    {
        ReadOnlySpan<byte> headers = qos switch
        {
            0 => "NATS/1.0\r\nNmqtt-Pub:0\r\n\r\n"u8,
            1 => "NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n"u8,
            _ => "NATS/1.0\r\nNmqtt-Pub:2\r\n\r\n"u8,
        };
        ReadOnlySpan<byte> reply = default;
        if (!lines.IsEmpty)
        {
            headers = WithLines(ref _headerScratch, headers, lines);
            // The response topic is the NATS reply too, so a NATS responder answers an MQTT 5 requester.
            reply = MqttV5Headers.ReplyIn(lines);
        }
        lock (session.PublishLock)
        {
            using (MqttPublishContext.Enter(qos, retain))
            {
                // Flushed once per read buffer (FlushPublished), not once per message.
                session.Publisher.PublishDeferred(session.Account, subject, reply, headers, payload);
            }
            if (qos == 0)
            {
                return true;
            }
            if (js.HasSharedConsumers)
            {
                headers = WithTaken(session.Account, subject, headers);
            }
            var stored = MqttJetStream.MessagesPrefix.Length + subject.Length;
            if (_storeScratch.Length < stored)
            {
                _storeScratch = new byte[stored * 2];
            }
            "$MQTT.msgs."u8.CopyTo(_storeScratch);
            subject.CopyTo(_storeScratch.AsSpan(MqttJetStream.MessagesPrefix.Length));
            return session.Publisher.PublishDeferred(session.Account, _storeScratch.AsSpan(0, stored), storeReply, headers, payload);
        }
    }

    /// <summary>
    /// The headers plus a taken line for each queue group (by member subject: a group merges same-named queues of
    /// overlapping filters, as Go's sublist does) that the fan-out did not hand to a QoS 1/2 shared member.
    /// </summary>
    private ReadOnlySpan<byte> WithTaken(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers)
    {
        var groups = account.SubList.Match(subject).QueueGroups;
        if (groups.Length == 0)
        {
            return headers;
        }
        var picked = MqttPublishContext.Picked;
        var size = headers.Length;
        foreach (var members in groups)
        {
            var chosen = ChosenSubject(members, picked);
            for (var i = 0; i < members.Length; i++)
            {
                if (IsNewSubject(members, i) && !members[i].Subject.AsSpan().SequenceEqual(chosen))
                {
                    size += TakenName.Length + members[i].Queue!.Length + 1 + members[i].Subject.Length + 2;
                }
            }
        }
        if (size == headers.Length)
        {
            return headers;
        }
        if (_takenScratch.Length < size)
        {
            _takenScratch = new byte[size * 2];
        }
        headers[..^2].CopyTo(_takenScratch);
        var at = headers.Length - 2;
        foreach (var members in groups)
        {
            var chosen = ChosenSubject(members, picked);
            for (var i = 0; i < members.Length; i++)
            {
                if (IsNewSubject(members, i) && !members[i].Subject.AsSpan().SequenceEqual(chosen))
                {
                    at += Append(TakenName, at);
                    at += Append(members[i].Queue, at);
                    _takenScratch[at++] = (byte)' ';
                    at += Append(members[i].Subject, at);
                    at += Append("\r\n"u8, at);
                }
            }
        }
        "\r\n"u8.CopyTo(_takenScratch.AsSpan(at));
        return _takenScratch.AsSpan(0, at + 2);
    }

    private int Append(ReadOnlySpan<byte> bytes, int at)
    {
        bytes.CopyTo(_takenScratch.AsSpan(at));
        return bytes.Length;
    }

    /// <summary>The subject of the QoS 1/2 shared member the draw chose in this group, or empty.</summary>
    private static ReadOnlySpan<byte> ChosenSubject(Subscriptions.Subscription[] members, ReadOnlySpan<Subscriptions.Subscription?> picked)
    {
        foreach (var member in picked)
        {
            if (member is not null && Array.IndexOf(members, member) >= 0)
            {
                return member.Subject;
            }
        }
        return default;
    }

    /// <summary>Whether no earlier member has the subject of member <paramref name="i"/> (members of one filter come together).</summary>
    private static bool IsNewSubject(Subscriptions.Subscription[] members, int i)
    {
        var subject = members[i].Subject.AsSpan();
        if (i > 0 && members[i - 1].Subject.AsSpan().SequenceEqual(subject))
        {
            return false;
        }
        for (var j = 0; j < i - 1; j++)
        {
            if (members[j].Subject.AsSpan().SequenceEqual(subject))
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>The constant 3.1.1 header block with an MQTT 5 publish's lines inserted before its final CRLF.</summary>
    private static ReadOnlySpan<byte> WithLines(ref byte[] scratch, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> lines)
    {
        var size = headers.Length + lines.Length;
        if (scratch.Length < size)
        {
            scratch = new byte[size * 2];
        }
        headers[..^2].CopyTo(scratch);
        lines.CopyTo(scratch.AsSpan(headers.Length - 2));
        "\r\n"u8.CopyTo(scratch.AsSpan(size - 2));
        return scratch.AsSpan(0, size);
    }
}
