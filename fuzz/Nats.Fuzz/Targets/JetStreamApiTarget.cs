using System.Text.Json;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Consumers;

namespace Nats.Fuzz.Targets;

/// <summary>
/// The $JS.API request bodies into their request and config types, the way the handlers decode them
/// (<see cref="ApiRequest.TryParse{T}"/>: any failure is Go's "invalid JSON" answer), and the pull request body of
/// CONSUMER.MSG.NEXT. Byte 0 picks the request type; the rest is the body. Oracle: a value or a refusal, never an
/// exception; a config that decoded encodes again (it is answered back in the create response and written to the
/// stream's or consumer's metadata).
/// </summary>
internal static class JetStreamApiTarget
{
    public static void Run(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
        {
            return;
        }
        var body = input[1..];
        var request = new ApiRequest
        {
            JsAccount = null,
            Account = null!,
            Subject = "$JS.API.FUZZ",
            Reply = [],
            Body = body.ToArray(),
        };
        _ = request.IsEmpty;
        switch (input[0] % 9)
        {
            case 0:
                if (request.TryParse(JsJson.Context.StreamConfig, out var stream))
                {
                    JsonSerializer.SerializeToUtf8Bytes(stream!, JsJson.Context.StreamConfig);
                }
                break;
            case 1:
                if (request.TryParse(ConsumerJson.Context.CreateConsumerRequest, out var consumer))
                {
                    JsonSerializer.SerializeToUtf8Bytes(consumer!.Config, ConsumerJson.Context.ConsumerConfig);
                }
                break;
            case 2:
                request.TryParse(JsJson.Context.StreamInfoRequest, out _);
                break;
            case 3:
                request.TryParse(JsJson.Context.StreamNamesRequest, out _);
                break;
            case 4:
                request.TryParse(JsJson.Context.PurgeRequest, out _);
                break;
            case 5:
                request.TryParse(JsJson.Context.MsgGetRequest, out _);
                break;
            case 6:
                request.TryParse(JsJson.Context.MsgDeleteRequest, out _);
                break;
            case 7:
                request.TryParse(ConsumerJson.Context.ConsumerPagedRequest, out _);
                break;
            default:
                PullRequest.TryParse(body, Environment.TickCount64, out _, out _, out _, out _, out _, out _);
                break;
        }
    }
}
