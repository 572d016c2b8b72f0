using Nats.Server.JetStream.Api;
using Nats.Storage;

namespace Nats.Server.JetStream;

/// <summary>Go's configUpdateCheck: what an update may not change, with Go's texts and order.</summary>
internal static class StreamUpdate
{
    public static StreamConfig Check(StreamConfig old, StreamConfig cfg)
    {
        static JsApiException Invalid(string text) => new(JsErrors.StreamInvalidConfigF.WithErr(text));

        if (cfg.Name != old.Name)
        {
            throw Invalid("stream configuration name must match original");
        }

        if (cfg.MaxConsumers != old.MaxConsumers)
        {
            throw Invalid("stream configuration update can not change MaxConsumers");
        }

        if (cfg.Storage != old.Storage)
        {
            throw Invalid("stream configuration update can not change storage type");
        }

        if (cfg.Retention != old.Retention)
        {
            throw Invalid("stream configuration update can not change retention policy");
        }

        if (!string.IsNullOrEmpty(old.TemplateOwner))
        {
            throw Invalid("stream configuration update not allowed on template owned stream");
        }

        if (!string.IsNullOrEmpty(cfg.TemplateOwner))
        {
            throw Invalid("stream configuration update can not be owned by a template");
        }

        if (!cfg.Sealed && old.Sealed)
        {
            throw Invalid("stream configuration update can not unseal a sealed stream");
        }

        if (!cfg.DenyDelete && old.DenyDelete)
        {
            throw Invalid("stream configuration update can not cancel deny message deletes");
        }

        if (!cfg.DenyPurge && old.DenyPurge)
        {
            throw Invalid("stream configuration update can not cancel deny purge");
        }

        if (!SameJson(cfg.Mirror, old.Mirror))
        {
            throw new JsApiException(JsErrors.StreamMirrorNotUpdatable);
        }

        if (!SameRepublish(cfg.RePublish, old.RePublish))
        {
            throw Invalid("stream configuration update can not change RePublish");
        }

        if (cfg.Sealed)
        {
            cfg.MaxAge = 0;
            cfg.Discard = DiscardPolicy.New;
            cfg.DenyDelete = true;
            cfg.DenyPurge = true;
            cfg.AllowRollup = false;
        }
        return cfg;
    }

    private static bool SameJson(StreamSource? a, StreamSource? b) =>
        (a is null && b is null)
        || (a is not null && b is not null && a.Name == b.Name && a.OptStartSeq == b.OptStartSeq && a.OptStartTime == b.OptStartTime
            && a.FilterSubject == b.FilterSubject && a.External?.ApiPrefix == b.External?.ApiPrefix && a.External?.DeliverPrefix == b.External?.DeliverPrefix);

    private static bool SameRepublish(RePublish? a, RePublish? b) =>
        (a is null && b is null)
        || (a is not null && b is not null && a.Source == b.Source && a.Destination == b.Destination && a.HeadersOnly == b.HeadersOnly);
}
