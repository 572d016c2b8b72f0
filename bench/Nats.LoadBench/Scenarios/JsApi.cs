using System.Text;
using System.Text.Json;
using Nats.LoadBench.Client;
using Nats.LoadBench.Servers;

namespace Nats.LoadBench.Scenarios;

/// <summary>
/// JetStream management over plain request/reply on its own connection. A server without
/// JetStream answers "no responders" (503) or nothing at all; both surface as SetupException.
/// </summary>
internal sealed class JsApi : IDisposable
{
    private readonly NatsConnection _conn;
    private readonly ReplyCatcher _catcher = new();
    private int _seq;

    public JsApi(Endpoint ep)
    {
        _conn = NatsConnection.Connect(ep.Host, ep.Port, Transport.Plain, "loadbench-jsapi");
        if (!_conn.InfoFlag("jetstream"))
        {
            _conn.Dispose();
            throw new SetupException("server INFO does not advertise jetstream");
        }

        _conn.SetHandler(_catcher);
        _conn.Send("SUB _INBOX.jsapi.* 1\r\n");
        _conn.Flush(10_000);
    }

    public JsonElement Request(string subject, string json, int timeoutMs = 10_000)
    {
        var inbox = $"_INBOX.jsapi.{++_seq}";
        _catcher.Reset(inbox);
        var body = Encoding.UTF8.GetBytes(json);
        _conn.Send([.. Encoding.ASCII.GetBytes($"PUB {subject} {inbox} {body.Length}\r\n"), .. body, (byte)'\r', (byte)'\n']);
        try
        {
            _conn.PumpUntil(() => _catcher.Reply != null, timeoutMs);
        }
        catch (TimeoutException ex)
        {
            throw new SetupException($"{subject}: no reply", ex);
        }

        if (_catcher.NoResponders)
        {
            throw new SetupException($"{subject}: no responders");
        }

        var doc = JsonDocument.Parse(_catcher.Reply!).RootElement.Clone();
        if (doc.TryGetProperty("error", out var error))
        {
            throw new SetupException($"{subject}: {error}");
        }

        return doc;
    }

    public void CreateStream(string name, string subject, string storage) =>
        Request($"$JS.API.STREAM.CREATE.{name}", $"{{\"name\":\"{name}\",\"subjects\":[\"{subject}\"],\"storage\":\"{storage}\",\"retention\":\"limits\",\"discard\":\"old\",\"num_replicas\":1}}");

    public long StreamMessages(string name)
    {
        var info = Request($"$JS.API.STREAM.INFO.{name}", "");
        return info.GetProperty("state").GetProperty("messages").GetInt64();
    }

    public void Dispose() => _conn.Dispose();

    private sealed class ReplyCatcher : IMsgHandler
    {
        private byte[] _inbox = [];

        public byte[]? Reply { get; private set; }

        public bool NoResponders { get; private set; }

        public void Reset(string inbox)
        {
            _inbox = Encoding.ASCII.GetBytes(inbox);
            Reply = null;
            NoResponders = false;
        }

        public void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
        {
            if (!subject.SequenceEqual(_inbox))
            {
                return;
            }

            if (headers.Length > 0 && payload.Length == 0 && headers.IndexOf("503"u8) >= 0)
            {
                NoResponders = true;
                Reply = [];
                return;
            }

            Reply = payload.ToArray();
        }

        public void OnBatchEnd()
        {
        }
    }
}
