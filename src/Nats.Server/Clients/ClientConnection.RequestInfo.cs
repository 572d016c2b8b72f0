using System.Buffers;
using System.Text.Json;

namespace Nats.Server.Clients;

/// <summary>What a service import tells the exporter about the requesting client (Go's Nats-Request-Info).</summary>
internal sealed partial class ClientConnection
{
    /// <summary>Go's ClientInfo for a service request: account and RTT, plus the client's details when the import shares them.</summary>
    internal byte[] RequestInfoJson(string account, bool share)
    {
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            if (share)
            {
                json.WriteString("start", StartTime);
                json.WriteString("host", RemoteIp);
                json.WriteNumber("id", Id);
            }
            json.WriteString("acc", account);
            if (share)
            {
                WriteIfPresent(json, "user", _connect.User ?? AuthUser?.Name);
                WriteIfPresent(json, "name", _connect.Name);
                WriteIfPresent(json, "lang", _connect.Lang);
                WriteIfPresent(json, "ver", _connect.Version);
            }
            var rttNanos = Rtt.Ticks * 100;
            if (rttNanos > 0)
            {
                json.WriteNumber("rtt", rttNanos);
            }
            if (share)
            {
                json.WriteString("server", _server.ServerName);
                json.WriteString("kind", "Client");
                json.WriteString("client_type", "nats");
            }
            json.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    private static void WriteIfPresent(Utf8JsonWriter json, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            json.WriteString(name, value);
        }
    }
}
