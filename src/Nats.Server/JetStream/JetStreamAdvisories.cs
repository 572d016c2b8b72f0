using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Nats.Server.Accounts.SystemEvents;
using Nats.Server.JetStream.Api;

namespace Nats.Server.JetStream;

/// <summary>Stream action advisories on <c>$JS.EVENT.ADVISORY.STREAM.{CREATED,DELETED,UPDATED}.&lt;stream&gt;</c> (Go's JSStreamActionAdvisory).</summary>
internal sealed class JetStreamAdvisories(JetStreamService service)
{
    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = Api.GoJsonEncoder.Instance };
    private readonly EventIds _ids = new();

    public void StreamAction(JsAccount account, string stream, string action)
    {
        var kind = action switch { "create" => "CREATED", "delete" => "DELETED", _ => "UPDATED" };
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("type", "io.nats.jetstream.advisory.v1.stream_action");
            json.WriteString("id", _ids.Next());
            json.WriteString("timestamp", GoTime.Now().ToString());
            json.WriteString("stream", stream);
            json.WriteString("action", action);
            if (!string.IsNullOrEmpty(service.Options.Domain))
            {
                json.WriteString("domain", service.Options.Domain);
            }
            json.WriteEndObject();
        }
        service.Transport.PublishAdvisory(account.Account, $"$JS.EVENT.ADVISORY.STREAM.{kind}.{stream}", buffer.WrittenSpan);
    }
}
