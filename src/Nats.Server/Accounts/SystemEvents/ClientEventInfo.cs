using System.Text.Json;
using Nats.Server.Clients;
using Nats.Server.Monitoring;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// The "client" block of connect, disconnect and auth-error events (Go's ClientInfo), captured when
/// the event happens so the loop writes what was true then. Empty fields are left out (omitempty).
/// </summary>
internal sealed class ClientEventInfo
{
    private DateTime _start;
    private DateTime? _stop;
    private string _host = "";
    private ulong _id;
    private string _account = "";
    private string? _user;
    private string? _name;
    private string? _lang;
    private string? _version;
    private long _rttNanoseconds;

    public DateTime Timestamp { get; private set; }

    /// <param name="account">The account the event names instead of the client's (Go's account auth-error event).</param>
    public static ClientEventInfo Capture(ClientConnection client, DateTime now, bool withStop, string? account = null) => new()
    {
        Timestamp = now,
        _start = client.StartTime,
        _stop = withStop ? now : null,
        _host = client.RemoteIp,
        _id = client.Id,
        _account = account ?? client.Account.Name,
        _user = client.RawAuthUser,
        _name = client.Name,
        _lang = client.Lang,
        _version = client.Version,
        // Go's connect event has no RTT yet; the disconnect and auth-error events carry it.
        // A client refused at CONNECT has no estimate yet; Go's is the time from accept to CONNECT.
        _rttNanoseconds = !withStop ? 0 : client.Rtt > TimeSpan.Zero ? client.Rtt.Ticks * 100 : Math.Max(1, (now - client.StartTime).Ticks) * 100,
    };

    public void Write(Utf8JsonWriter json)
    {
        json.WriteStartObject("client");
        json.WriteString("start", GoFormat.Time(_start));
        WriteIfSet(json, "host", _host);
        if (_id != 0)
        {
            json.WriteNumber("id", _id);
        }
        json.WriteString("acc", _account);
        WriteIfSet(json, "user", _user);
        WriteIfSet(json, "name", _name);
        WriteIfSet(json, "lang", _lang);
        WriteIfSet(json, "ver", _version);
        if (_rttNanoseconds != 0)
        {
            json.WriteNumber("rtt", _rttNanoseconds);
        }
        if (_stop is { } stop)
        {
            json.WriteString("stop", GoFormat.Time(stop));
        }
        json.WriteString("kind", "Client");
        json.WriteString("client_type", "nats");
        json.WriteEndObject();
    }

    private static void WriteIfSet(Utf8JsonWriter json, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            json.WriteString(name, value);
        }
    }
}
