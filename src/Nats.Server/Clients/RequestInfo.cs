using System.Buffers;
using System.Text.Json;

namespace Nats.Server.Clients;

/// <summary>
/// What a service import tells the exporter about the requesting client (Go's ClientInfo in the
/// Nats-Request-Info header): always the account and RTT, the client's details when the import
/// shares them, and this server's name and cluster also when the import leads into the system account
/// (Go's addServerAndClusterInfo: the cluster's JetStream places streams by it).
/// </summary>
internal readonly record struct RequestInfo(
    string Account,
    bool Share,
    DateTime Start,
    string Host,
    ulong Id,
    string? User,
    string? Name,
    string? Lang,
    string? Version,
    TimeSpan Rtt,
    string Server,
    string? Cluster = null,
    bool ServerInfo = false)
{
    /// <summary>The header's JSON value, fields in Go's order.</summary>
    public byte[] ToJson()
    {
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            if (Share)
            {
                json.WriteString("start", Start);
                json.WriteString("host", Host);
                json.WriteNumber("id", Id);
            }
            json.WriteString("acc", Account);
            if (Share)
            {
                WriteIfPresent(json, "user", User);
                WriteIfPresent(json, "name", Name);
                WriteIfPresent(json, "lang", Lang);
                WriteIfPresent(json, "ver", Version);
            }
            var rttNanos = Rtt.Ticks * 100;
            if (rttNanos > 0)
            {
                json.WriteNumber("rtt", rttNanos);
            }
            if (Share || ServerInfo)
            {
                json.WriteString("server", Server);
                WriteIfPresent(json, "cluster", Cluster);
            }
            if (Share)
            {
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
