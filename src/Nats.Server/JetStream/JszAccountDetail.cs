using System.Text.Json;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

namespace Nats.Server.JetStream;

/// <summary>
/// Go's AccountDetail (monitor.go accountDetail) for <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.JSZ</c>: usage, the
/// account's reserved limits, API counters, and with <c>streams</c> each stream's detail (config with
/// <c>config</c>, consumers with <c>consumer</c>). Stream and consumer parts are the API's own JSON.
/// </summary>
internal static class JszAccountDetail
{
    public static void Write(Utf8JsonWriter json, JsAccount js, bool streams, bool consumers, bool config)
    {
        var (memory, storage) = js.Usage();
        var serverName = js.Service.Server.ServerName;
        json.WriteStartObject();
        json.WriteString("name", js.Account.Name);
        json.WriteString("id", js.Account.Name);
        json.WriteNumber("memory", memory);
        json.WriteNumber("storage", storage);
        // Go prints the account's limits as uint64: unlimited (-1) is 18446744073709551615.
        json.WriteNumber("reserved_memory", unchecked((ulong)js.Limits.MaxMemory));
        json.WriteNumber("reserved_storage", unchecked((ulong)js.Limits.MaxStore));
        json.WriteNumber("accounts", 0);
        json.WriteNumber("ha_assets", 0);
        json.WriteStartObject("api");
        json.WriteNumber("total", js.ApiTotal);
        json.WriteNumber("errors", js.ApiErrors);
        json.WriteEndObject();
        var list = streams ? js.Streams() : [];
        if (list.Count > 0)
        {
            json.WriteStartArray("stream_detail");
            foreach (var stream in list)
            {
                WriteStream(json, stream, serverName, consumers, config);
            }
            json.WriteEndArray();
        }
        json.WriteEndObject();
    }

    private static void WriteStream(Utf8JsonWriter json, JsStream stream, string serverName, bool consumers, bool config)
    {
        json.WriteStartObject();
        json.WriteString("name", stream.Name);
        json.WriteString("created", stream.Created.ToString());
        if (stream.Group is { } group)
        {
            json.WritePropertyName("cluster");
            json.WriteRawValue(JsonSerializer.SerializeToUtf8Bytes(group.ClusterInfo(), JsJson.Context.StreamClusterInfo), skipInputValidation: true);
        }
        else
        {
            json.WriteStartObject("cluster");
            json.WriteString("leader", serverName);
            json.WriteEndObject();
        }
        if (config)
        {
            json.WritePropertyName("config");
            json.WriteRawValue(JsonSerializer.SerializeToUtf8Bytes(stream.Config, JsJson.Context.StreamConfig), skipInputValidation: true);
        }
        json.WritePropertyName("state");
        json.WriteRawValue(JsonSerializer.SerializeToUtf8Bytes(stream.State(), JsJson.Context.ApiStreamState), skipInputValidation: true);
        var all = consumers ? stream.Consumers.All : [];
        if (all.Length > 0)
        {
            json.WriteStartArray("consumer_detail");
            foreach (var consumer in all.OrderBy(c => c.Name, StringComparer.Ordinal))
            {
                var info = consumer.Info();
                if (!config)
                {
                    info.Config = null;
                }
                json.WriteRawValue(JsonSerializer.SerializeToUtf8Bytes(info, ConsumerJson.Context.ConsumerInfo), skipInputValidation: true);
            }
            json.WriteEndArray();
        }
        json.WriteEndObject();
    }
}
