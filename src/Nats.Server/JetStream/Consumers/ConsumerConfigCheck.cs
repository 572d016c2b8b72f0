using System.Globalization;
using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Configuration;
using Nats.Subjects;

namespace Nats.Server.JetStream.Consumers;

/// <summary>Go 2.9.10's setConsumerConfigDefaults and checkConsumerCfg, in Go's order so the first error matches.</summary>
internal static class ConsumerConfigCheck
{
    public const long DefaultAckWait = 30_000_000_000;
    public const long DefaultInactiveThreshold = 5_000_000_000;
    public const int DefaultMaxAckPending = 1000;
    public const int DefaultMaxWaiting = 512;
    private const int MaxDescriptionLength = 4 * 1024;
    private const long Millisecond = 1_000_000;

    public static void SetDefaults(ConsumerConfig config, JetStreamAccountLimits limits)
    {
        // Go's omitempty prints "" as absent; keep them absent here too.
        config.Durable = NullIfEmpty(config.Durable);
        config.Name = NullIfEmpty(config.Name);
        config.Description = NullIfEmpty(config.Description);
        config.FilterSubject = NullIfEmpty(config.FilterSubject);
        config.SampleFrequency = NullIfEmpty(config.SampleFrequency);
        config.DeliverSubject = NullIfEmpty(config.DeliverSubject);
        config.DeliverGroup = NullIfEmpty(config.DeliverGroup);
        if (config.BackOff is { Count: 0 })
        {
            config.BackOff = null;
        }
        if (!config.IsPush && config.MaxWaiting == 0)
        {
            config.MaxWaiting = DefaultMaxWaiting;
        }
        var acks = config.AckPolicy is AckPolicyKind.Explicit or AckPolicyKind.All;
        if (config.AckWait == 0 && acks)
        {
            config.AckWait = DefaultAckWait;
        }
        if (config.MaxDeliver == 0)
        {
            config.MaxDeliver = -1;
        }
        if (config.BackOff is { Count: > 0 } backoff)
        {
            config.AckWait = backoff[0];
        }
        if (acks && config.MaxAckPending == 0)
        {
            var pending = DefaultMaxAckPending;
            if (limits.MaxAckPending > 0 && limits.MaxAckPending < pending)
            {
                pending = (int)limits.MaxAckPending;
            }
            config.MaxAckPending = pending;
        }
    }

    private static string? NullIfEmpty(string? text) => string.IsNullOrEmpty(text) ? null : text;

    public static JsApiError? Check(ConsumerConfig config, StreamConfig stream, JetStreamAccountLimits limits)
    {
        if (config.Replicas > 0 && config.Replicas > Math.Max(stream.Replicas, 1))
        {
            return JsErrors.ConsumerReplicasExceedsStream;
        }
        if (config.Replicas < 0)
        {
            return JsErrors.ReplicasCountCannotBeNegative;
        }
        if (config.BackOff is { Count: > 0 } backoff && config.MaxDeliver <= backoff.Count)
        {
            return JsErrors.ConsumerMaxDeliverBackoff;
        }
        if ((config.Description?.Length ?? 0) > MaxDescriptionLength)
        {
            return JsErrors.ConsumerDescriptionTooLong.With("max", MaxDescriptionLength);
        }
        if (config.IsPush)
        {
            var deliver = config.DeliverSubject!;
            if (SubjectRules.HasWildcard(deliver))
            {
                return JsErrors.ConsumerDeliverToWildcards;
            }
            if (!SubjectRules.IsValid(deliver))
            {
                return JsErrors.ConsumerInvalidDeliverSubject;
            }
            if ((stream.Subjects ?? []).Any(s => SubjectRules.Collide(s, deliver)))
            {
                return JsErrors.ConsumerDeliverCycle;
            }
            if (config.MaxWaiting != 0)
            {
                return JsErrors.ConsumerPushMaxWaiting;
            }
            if (config.MaxAckPending > 0 && config.AckPolicy == AckPolicyKind.None)
            {
                return JsErrors.ConsumerMaxPendingAckPolicyRequired;
            }
            if (config.Heartbeat > 0 && config.Heartbeat < 100 * Millisecond)
            {
                return JsErrors.ConsumerSmallHeartbeat;
            }
        }
        else
        {
            if (config.AckPolicy == AckPolicyKind.None && stream.Retention == RetentionPolicy.WorkQueue)
            {
                return JsErrors.ConsumerPullRequiresAck;
            }
            if (config.RateLimit > 0)
            {
                return JsErrors.ConsumerPullWithRateLimit;
            }
            if (config.MaxWaiting < 0)
            {
                return JsErrors.ConsumerMaxWaitingNegative;
            }
            if (config.Heartbeat > 0)
            {
                return JsErrors.ConsumerHBRequiresPush;
            }
            if (config.FlowControl)
            {
                return JsErrors.ConsumerFCRequiresPush;
            }
            if (config.MaxRequestBatch < 0)
            {
                return JsErrors.ConsumerMaxRequestBatchNegative;
            }
            if (config.MaxRequestExpires != 0 && config.MaxRequestExpires < Millisecond)
            {
                return JsErrors.ConsumerMaxRequestExpiresToSmall;
            }
        }
        if (limits.MaxAckPending > 0 && config.MaxAckPending > limits.MaxAckPending)
        {
            return JsErrors.ConsumerMaxPendingAckExcess.With("limit", limits.MaxAckPending);
        }
        if (config.Direct)
        {
            if (!config.IsPush)
            {
                return JsErrors.ConsumerDirectRequiresPush;
            }
            if (config.IsDurable)
            {
                return JsErrors.ConsumerDirectRequiresEphemeral;
            }
        }
        if (config.FilterSubject is { } filter && !ValidFilter(filter, stream))
        {
            return JsErrors.ConsumerFilterNotSubset;
        }
        if (CheckStart(config) is { } policy)
        {
            return JsErrors.ConsumerInvalidPolicy.WithErr(policy);
        }
        if (config.SampleFrequency is { } sample)
        {
            var text = sample.EndsWith('%') ? sample[..^1] : sample;
            if (!int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var frequency))
            {
                return JsErrors.ConsumerInvalidSampling.WithErr($"strconv.Atoi: parsing \"{text}\": invalid syntax");
            }
            if (frequency < 0)
            {
                return JsErrors.ConsumerInvalidSampling.WithErr("<nil>");
            }
        }
        if (config.FlowControl && config.Heartbeat == 0)
        {
            return JsErrors.ConsumerWithFlowControlNeedsHeartbeats;
        }
        if (config.Durable is not null && config.Name is not null && config.Name != config.Durable)
        {
            return JsErrors.ConsumerCreateDurableAndNameMismatch;
        }
        return null;
    }

    /// <summary>Go's validFilteredSubject: the filter is a subset of one stream subject (or, for mirrors and sources, anything).</summary>
    private static bool ValidFilter(string filter, StreamConfig stream)
    {
        if (stream.Mirror is not null || stream.Sources is { Count: > 0 })
        {
            return true;
        }
        if (!SubjectRules.IsValid(filter))
        {
            return false;
        }
        foreach (var subject in stream.Subjects ?? [])
        {
            if (SubjectRules.IsSubsetMatch(filter, subject) || SubjectRules.IsSubsetMatch(subject, filter))
            {
                return true;
            }
        }
        return false;
    }

    private static string? CheckStart(ConsumerConfig config)
    {
        static string Bad(string policy, string start) => $"consumer delivery policy is deliver {policy}, but optional start {start} is also set";
        static string NotSet(string policy, string what) => $"consumer delivery policy is deliver {policy}, but optional {what} is not set";
        var seq = config.OptStartSeq > 0;
        var time = config.OptStartTime is not null;
        return config.DeliverPolicy switch
        {
            DeliverPolicy.All when seq => Bad("all", "sequence"),
            DeliverPolicy.All when time => Bad("all", "time"),
            DeliverPolicy.Last when seq => Bad("last", "sequence"),
            DeliverPolicy.Last when time => Bad("last", "time"),
            DeliverPolicy.LastPerSubject when seq => Bad("last per subject", "sequence"),
            DeliverPolicy.LastPerSubject when time => Bad("last per subject", "time"),
            DeliverPolicy.LastPerSubject when config.FilterSubject is null => NotSet("last per subject", "filter subject"),
            DeliverPolicy.New when seq => Bad("new", "sequence"),
            DeliverPolicy.New when time => Bad("new", "time"),
            DeliverPolicy.ByStartSequence when !seq => NotSet("by start sequence", "start sequence"),
            DeliverPolicy.ByStartSequence when time => Bad("by start sequence", "time"),
            DeliverPolicy.ByStartTime when !time => NotSet("by start time", "start time"),
            DeliverPolicy.ByStartTime when seq => Bad("by start time", "start sequence"),
            _ => null,
        };
    }
}
