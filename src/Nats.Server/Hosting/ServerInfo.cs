using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Nats.Server.Hosting;

/// <summary>
/// The INFO line: fields in the Go server's order (the Info struct in server.go), omitting the
/// omitempty ones when unset, and written as "INFO {json} \r\n" (note the space), like Go.
/// </summary>
internal sealed class ServerInfo
{
    private static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    public required string ServerId { get; init; }
    public required string ServerName { get; init; }
    public required string Version { get; init; }
    public required string RuntimeVersion { get; init; }
    public required string Host { get; init; }
    public required int Port { get; init; }
    public bool Headers { get; init; }
    public bool AuthRequired { get; init; }
    public bool TlsRequired { get; init; }

    /// <summary>allow_non_tls: TLS is offered, not required.</summary>
    public bool TlsAvailable { get; init; }
    public bool TlsVerify { get; init; }
    public int MaxPayload { get; init; }
    public bool JetStream { get; init; }
    public string? Domain { get; init; }
    public string[]? ConnectUrls { get; init; }
    public bool LameDuckMode { get; set; }

    /// <param name="maxPayload">The client's own limit when its account lowers the server's (Go's c.mpay).</param>
    public byte[] RenderForClient(ulong clientId, string? clientIp, string? nonce = null, int? maxPayload = null)
    {
        var buffer = new ArrayBufferWriter<byte>(512);
        buffer.Write("INFO "u8);
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteString("server_id", ServerId);
            json.WriteString("server_name", ServerName);
            json.WriteString("version", Version);
            json.WriteNumber("proto", 1);
            json.WriteString("go", RuntimeVersion);
            json.WriteString("host", Host);
            json.WriteNumber("port", Port);
            json.WriteBoolean("headers", Headers);
            if (AuthRequired)
            {
                json.WriteBoolean("auth_required", true);
            }
            if (TlsRequired)
            {
                json.WriteBoolean("tls_required", true);
            }
            if (TlsVerify)
            {
                json.WriteBoolean("tls_verify", true);
            }
            if (TlsAvailable)
            {
                json.WriteBoolean("tls_available", true);
            }
            json.WriteNumber("max_payload", maxPayload ?? MaxPayload);
            if (JetStream)
            {
                json.WriteBoolean("jetstream", true);
            }
            if (clientId != 0)
            {
                json.WriteNumber("client_id", clientId);
            }
            if (!string.IsNullOrEmpty(clientIp))
            {
                json.WriteString("client_ip", clientIp);
            }
            if (!string.IsNullOrEmpty(nonce))
            {
                json.WriteString("nonce", nonce);
            }
            if (!string.IsNullOrEmpty(Domain))
            {
                json.WriteString("domain", Domain);
            }
            if (ConnectUrls is { Length: > 0 })
            {
                json.WriteStartArray("connect_urls");
                foreach (var url in ConnectUrls)
                {
                    json.WriteStringValue(url);
                }
                json.WriteEndArray();
            }
            if (LameDuckMode)
            {
                json.WriteBoolean("ldm", true);
            }
            json.WriteEndObject();
        }
        buffer.Write(" \r\n"u8);
        return buffer.WrittenSpan.ToArray();
    }
}
