using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.JetStream.Api;

/// <summary>Source-generated (de)serialisers for every JetStream API type: no reflection on the request path.</summary>
[JsonSourceGenerationOptions(
    DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    PropertyNameCaseInsensitive = true,
    NumberHandling = JsonNumberHandling.Strict)]
[JsonSerializable(typeof(StreamConfig))]
[JsonSerializable(typeof(ApiResponse))]
[JsonSerializable(typeof(StreamCreateResponse))]
[JsonSerializable(typeof(StreamInfoResponse))]
[JsonSerializable(typeof(StreamNamesResponse))]
[JsonSerializable(typeof(StreamListResponse))]
[JsonSerializable(typeof(SuccessResponse))]
[JsonSerializable(typeof(PurgeResponse))]
[JsonSerializable(typeof(MsgGetResponse))]
[JsonSerializable(typeof(AccountInfoResponse))]
[JsonSerializable(typeof(StreamInfoRequest))]
[JsonSerializable(typeof(StreamNamesRequest))]
[JsonSerializable(typeof(PurgeRequest))]
[JsonSerializable(typeof(MsgDeleteRequest))]
[JsonSerializable(typeof(MsgGetRequest))]
[JsonSerializable(typeof(StreamMetaFile))]
[JsonSerializable(typeof(StreamClusterInfo))]
internal sealed partial class JsJsonContext : JsonSerializerContext;

/// <summary>The context the API uses: Go escapes no more than &lt;, &gt; and &amp; in JSON, so neither do we beyond what is needed.</summary>
internal static class JsJson
{
    public static readonly JsJsonContext Context = new(new JsonSerializerOptions
    {
        Encoder = GoJsonEncoder.Instance,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
        PropertyNameCaseInsensitive = true,
    });
}
