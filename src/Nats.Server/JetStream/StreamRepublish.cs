using System.Buffers;
using System.Buffers.Text;
using System.Text;
using Nats.Server.Mappings;
using Nats.Subjects;

namespace Nats.Server.JetStream;

/// <summary>
/// A stream's <c>republish</c> (Go 2.9.10 processJetStreamMsg): every stored message whose subject matches
/// <c>src</c> is sent to <c>dest</c> (a subject transform) with Nats-Stream, Nats-Subject, Nats-Sequence and
/// Nats-Last-Sequence (the subject's previous sequence, for gap detection) appended to its headers, and
/// with <c>headers_only</c> Nats-Msg-Size instead of the payload. Sent once stored, before the PubAck, as Go.
/// Republished messages go to client subscriptions; other streams do not capture them.
/// </summary>
internal sealed class StreamRepublish
{
    private readonly string _stream;
    private readonly string _source;
    private readonly bool _headersOnly;
    private readonly SubjectTransform _transform;

    private StreamRepublish(string stream, string source, SubjectTransform transform, bool headersOnly)
    {
        _stream = stream;
        _source = source;
        _transform = transform;
        _headersOnly = headersOnly;
    }

    /// <summary>The config's republish, or null; a transform Go's newTransform refuses is null too (the validator refused it already).</summary>
    public static StreamRepublish? For(Api.StreamConfig config)
    {
        if (config.RePublish is not { } republish)
        {
            return null;
        }
        var source = string.IsNullOrEmpty(republish.Source) ? ">" : republish.Source;
        return TryTransform(source, republish.Destination) is { } transform
            ? new StreamRepublish(config.Name, source, transform, republish.HeadersOnly)
            : null;
    }

    public static SubjectTransform? TryTransform(string source, string destination)
    {
        try
        {
            return SubjectTransform.Create(source, destination);
        }
        catch (MappingException)
        {
            return null;
        }
    }

    public bool Matches(string subject) => SubjectRules.Matches(subject, _source);

    public void Send(JsStream stream, string subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, ulong seq, ulong lastSubjectSeq)
    {
        var destination = Encoding.UTF8.GetBytes(_transform.Apply(subject));
        var block = new ArrayBufferWriter<byte>(headers.Length + 160);
        if (headers.Length > 2)
        {
            // Go's genHeader: the existing block without its closing CRLF, then the new lines.
            block.Write(headers[..^2]);
        }
        else
        {
            block.Write("NATS/1.0\r\n"u8);
        }
        Line(block, "Nats-Stream: ", _stream);
        Line(block, "Nats-Subject: ", subject);
        Number(block, "Nats-Sequence: "u8, seq);
        Number(block, "Nats-Last-Sequence: "u8, lastSubjectSeq);
        if (_headersOnly)
        {
            Number(block, "Nats-Msg-Size: "u8, (ulong)payload.Length);
        }
        block.Write("\r\n"u8);
        stream.Account.Service.Transport.PublishAsGoInternal(stream.Account.Account, destination, block.WrittenSpan, _headersOnly ? default : payload);
    }

    private static void Line(ArrayBufferWriter<byte> block, string name, string value)
    {
        block.Write(Encoding.ASCII.GetBytes(name));
        block.Write(Encoding.UTF8.GetBytes(value));
        block.Write("\r\n"u8);
    }

    private static void Number(ArrayBufferWriter<byte> block, ReadOnlySpan<byte> name, ulong value)
    {
        block.Write(name);
        var span = block.GetSpan(20);
        Utf8Formatter.TryFormat(value, span, out var written);
        block.Advance(written);
        block.Write("\r\n"u8);
    }
}
