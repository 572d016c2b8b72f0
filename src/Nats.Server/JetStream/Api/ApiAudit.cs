using System.Buffers;
using System.Text;
using System.Text.Json;
using Nats.Server.Accounts.SystemEvents;

namespace Nats.Server.JetStream.Api;

/// <summary>
/// Go's API audit advisory (JSAPIAudit, <c>io.nats.jetstream.advisory.v1.api_audit</c>) on
/// <c>$JS.EVENT.ADVISORY.API</c>: every answered API request (errors included, answered or not) with the
/// requesting client, the request and the response as text. Built only when someone listens.
/// </summary>
internal static class ApiAudit
{
    public const string Subject = "$JS.EVENT.ADVISORY.API";
    public const string Type = "io.nats.jetstream.advisory.v1.api_audit";

    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = GoJsonEncoder.Instance };
    private static readonly EventIds Ids = new();

    public static void Send(JetStreamService service, ApiRequest request, ReadOnlySpan<byte> response)
    {
        if (!JetStreamTransport.HasInterest(request.Account, Subject))
        {
            return;
        }
        var server = service.Server.ServerName;
        var buffer = new ArrayBufferWriter<byte>(256 + request.Body.Length + response.Length * 2);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("type", Type);
            json.WriteString("id", Ids.Next());
            json.WriteString("timestamp", GoTime.Now().ToString());
            json.WriteString("server", server);
            // Go's ClientInfo as the service import passes it (not shared): account, RTT, server.
            json.WriteStartObject("client");
            json.WriteString("acc", request.Account.Name);
            var rtt = request.Origin?.Rtt.Ticks * 100 ?? 0;
            if (rtt > 0)
            {
                json.WriteNumber("rtt", rtt);
            }
            json.WriteString("server", server);
            json.WriteEndObject();
            json.WriteString("subject", request.RawSubject ?? request.Subject);
            if (request.Body.Length > 0)
            {
                json.WriteString("request", Encoding.UTF8.GetString(request.Body));
            }
            json.WriteString("response", Encoding.UTF8.GetString(response));
            if (!string.IsNullOrEmpty(service.Options.Domain))
            {
                json.WriteString("domain", service.Options.Domain);
            }
            json.WriteEndObject();
        }
        service.Transport.PublishAdvisory(request.Account, Subject, buffer.WrittenSpan);
    }
}
