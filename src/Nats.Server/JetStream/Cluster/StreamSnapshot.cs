using System.Buffers;
using System.Text.Json;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A stream group's RAFT snapshot: the stream's state, not its messages (Go's streamSnapshot, the same JSON:
/// <c>messages</c>, <c>bytes</c>, <c>first_seq</c>, <c>last_seq</c>, <c>clfs</c>, <c>deleted</c>). A replica that
/// installs one drops what lies below <see cref="FirstSeq"/> and the deleted sequences, then copies the messages it
/// lacks up to <see cref="LastSeq"/> from the leader's store (<see cref="StreamCatchup"/>).
/// </summary>
/// <remarks><c>clfs</c> (Go's count of entries that failed to apply) is always 0: a replica that fails to store an
/// entry skips its sequence, so the leader's numbering never has to account for failures.</remarks>
internal sealed record StreamSnapshot(ulong Msgs, ulong Bytes, ulong FirstSeq, ulong LastSeq, ulong[] Deleted)
{
    public byte[] Encode()
    {
        var buffer = new ArrayBufferWriter<byte>(128 + (Deleted.Length * 8));
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteNumber("messages", Msgs);
            json.WriteNumber("bytes", Bytes);
            json.WriteNumber("first_seq", FirstSeq);
            json.WriteNumber("last_seq", LastSeq);
            json.WriteNumber("clfs", 0);
            if (Deleted.Length > 0)
            {
                json.WriteStartArray("deleted");
                foreach (var seq in Deleted)
                {
                    json.WriteNumberValue(seq);
                }
                json.WriteEndArray();
            }
            json.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Null for anything that is not a stream snapshot (an empty one, from before the log was compacted).</summary>
    public static StreamSnapshot? TryDecode(ReadOnlySpan<byte> data)
    {
        if (data.IsEmpty)
        {
            return null;
        }
        try
        {
            var reader = new Utf8JsonReader(data);
            ulong msgs = 0, bytes = 0, first = 0, last = 0;
            var deleted = new List<ulong>();
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                return null;
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var name = reader.GetString();
                reader.Read();
                switch (name)
                {
                    case "messages":
                        msgs = reader.GetUInt64();
                        break;
                    case "bytes":
                        bytes = reader.GetUInt64();
                        break;
                    case "first_seq":
                        first = reader.GetUInt64();
                        break;
                    case "last_seq":
                        last = reader.GetUInt64();
                        break;
                    case "deleted" when reader.TokenType == JsonTokenType.StartArray:
                        while (reader.Read() && reader.TokenType == JsonTokenType.Number)
                        {
                            deleted.Add(reader.GetUInt64());
                        }
                        break;
                    default:
                        reader.Skip();
                        break;
                }
            }
            return new StreamSnapshot(msgs, bytes, first, last, [.. deleted]);
        }
        catch (Exception e) when (e is JsonException or FormatException or InvalidOperationException)
        {
            return null;
        }
    }
}
