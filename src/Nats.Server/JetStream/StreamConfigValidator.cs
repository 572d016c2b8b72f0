using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Configuration;
using Nats.Storage;
using Nats.Subjects;

namespace Nats.Server.JetStream;

/// <summary>Go's checkStreamCfg (stream.go 2.9.10): defaults, then validation with Go's texts, in Go's order.</summary>
internal static class StreamConfigValidator
{
    public const int MaxNameLength = 255;
    public const int MaxDescriptionLength = 4 * 1024;
    public const int MaxReplicas = 5;
    public static readonly long DefaultDuplicateWindow = (long)TimeSpan.FromMinutes(2).TotalNanoseconds;
    private const long HundredMillis = 100_000_000;

    public static bool IsValidName(string name) => name.Length > 0 && name.AsSpan().IndexOfAny(" \t\r\n\f.*>") < 0;

    /// <summary>Returns the effective config (a copy) or throws <see cref="JsApiException"/>.</summary>
    public static StreamConfig Check(StreamConfig config, JsAccount account, JetStreamOptions options)
    {
        static JsApiException Invalid(string text) => new(JsErrors.StreamInvalidConfigF.WithErr(text));

        if (!IsValidName(config.Name))
        {
            throw Invalid("stream name is required and can not contain '.', '*', '>'");
        }
        if (config.Name.Length > MaxNameLength)
        {
            throw Invalid($"stream name is too long, maximum allowed is {MaxNameLength}");
        }
        if (config.Description is { Length: > MaxDescriptionLength })
        {
            throw Invalid($"stream description is too long, maximum allowed is {MaxDescriptionLength}");
        }
        var cfg = config.Clone();
        Normalise(cfg);
        if (cfg.Storage == StorageKind.Unset)
        {
            cfg.Storage = StorageKind.File;
        }
        if (cfg.Replicas == 0)
        {
            cfg.Replicas = 1;
        }
        if (cfg.Replicas > MaxReplicas)
        {
            throw Invalid($"maximum replicas is {MaxReplicas}");
        }
        if (cfg.Replicas < 0)
        {
            throw new JsApiException(JsErrors.ReplicasCountCannotBeNegative);
        }
        if (cfg.MaxMsgs == 0)
        {
            cfg.MaxMsgs = -1;
        }

        if (cfg.MaxMsgsPerSubject == 0)
        {
            cfg.MaxMsgsPerSubject = -1;
        }

        if (cfg.MaxBytes == 0)
        {
            cfg.MaxBytes = -1;
        }

        if (cfg.MaxMsgSize == 0)
        {
            cfg.MaxMsgSize = -1;
        }

        if (cfg.MaxConsumers == 0)
        {
            cfg.MaxConsumers = -1;
        }

        var serverWindow = (long)options.MaxDuplicateWindow.TotalNanoseconds;
        if (cfg.DuplicateWindow == 0 && cfg.Mirror is null)
        {
            var maxWindow = DefaultDuplicateWindow;
            if (serverWindow > 0 && maxWindow > serverWindow)
            {
                maxWindow = serverWindow;
            }
            cfg.DuplicateWindow = cfg.MaxAge != 0 && cfg.MaxAge < maxWindow ? cfg.MaxAge : maxWindow;
        }
        if (cfg.MaxAge > 0 && cfg.MaxAge < HundredMillis)
        {
            throw Invalid("max age needs to be >= 100ms");
        }
        if (cfg.DuplicateWindow < 0)
        {
            throw Invalid("duplicates window can not be negative");
        }
        if (cfg.MaxAge != 0 && cfg.DuplicateWindow > cfg.MaxAge)
        {
            throw Invalid("duplicates window can not be larger then max age");
        }
        if (serverWindow > 0 && cfg.DuplicateWindow > serverWindow)
        {
            throw Invalid($"duplicates window can not be larger then server limit of {Nats.Server.Configuration.GoDuration.Format(options.MaxDuplicateWindow)}");
        }
        if (cfg.DuplicateWindow > 0 && cfg.DuplicateWindow < HundredMillis)
        {
            throw Invalid("duplicates window needs to be >= 100ms");
        }
        if (cfg.DenyPurge && cfg.AllowRollup)
        {
            throw Invalid("roll-ups require the purge permission");
        }
        if (cfg.DiscardNewPerSubject)
        {
            if (cfg.Discard != DiscardPolicy.New)
            {
                throw Invalid("discard new per subject requires discard new policy to be set");
            }
            if (cfg.MaxMsgsPerSubject <= 0)
            {
                throw Invalid("discard new per subject requires max msgs per subject > 0");
            }
        }
        CheckSources(cfg, account);

        if (cfg.Subjects is null or { Count: 0 })
        {
            if (cfg.Mirror is null && cfg.Sources is null or { Count: 0 })
            {
                cfg.Subjects = [cfg.Name];
            }
        }
        else
        {
            if (cfg.Mirror is not null)
            {
                throw new JsApiException(JsErrors.MirrorWithSubjects);
            }
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var subject in cfg.Subjects)
            {
                if (!seen.Add(subject))
                {
                    throw Invalid("duplicate subjects detected");
                }
                if (SubjectRules.IsValid(subject) && SubjectRules.IsSubsetMatch(subject, "$JS.API.>"))
                {
                    throw Invalid("subjects overlap with jetstream api");
                }
                if (!SubjectRules.IsValid(subject))
                {
                    throw Invalid("invalid subject");
                }
            }
        }
        if (cfg.Subjects is null or { Count: 0 } && cfg.Sources is null or { Count: 0 } && cfg.Mirror is null)
        {
            throw Invalid("stream needs at least one configured subject or be a source/mirror");
        }
        var limits = account.Limits;
        var streamLimit = cfg.Storage == StorageKind.Memory ? limits.MemoryMaxStreamBytes : limits.StoreMaxStreamBytes;
        if (limits.MaxBytesRequired && cfg.MaxBytes <= 0)
        {
            throw new JsApiException(JsErrors.StreamMaxBytesRequired);
        }
        if (streamLimit > 0 && cfg.MaxBytes > streamLimit)
        {
            throw new JsApiException(JsErrors.StreamMaxStreamBytesExceeded);
        }
        if (cfg.Subjects is { Count: > 1 })
        {
            foreach (var subject in cfg.Subjects)
            {
                foreach (var other in cfg.Subjects)
                {
                    if (other != subject && SubjectRules.Collide(other, subject))
                    {
                        throw Invalid($"subject \"{subject}\" overlaps with \"{other}\"");
                    }
                }
            }
        }
        if (cfg.RePublish is { } republish)
        {
            if (string.IsNullOrEmpty(republish.Source))
            {
                republish.Source = ">";
            }
            if (!(cfg.Subjects ?? []).Any(s => SubjectRules.Collide(republish.Source, s)))
            {
                throw Invalid("stream configuration for republish source is not valid subset of subjects");
            }
            if ((cfg.Subjects ?? []).Any(s => SubjectRules.Collide(republish.Destination, s)))
            {
                throw Invalid("stream configuration for republish destination forms a cycle");
            }
            if (!SubjectRules.IsValid(republish.Destination) || !SubjectRules.IsValid(republish.Source)
                || StreamRepublish.TryTransform(republish.Source, republish.Destination) is null)
            {
                throw Invalid("stream configuration for republish not valid");
            }
        }
        return cfg;
    }

    /// <summary>Go's omitempty makes "" and [] disappear; keeping them null gives the same JSON.</summary>
    private static void Normalise(StreamConfig cfg)
    {
        if (cfg.Description == "")
        {
            cfg.Description = null;
        }

        if (cfg.TemplateOwner == "")
        {
            cfg.TemplateOwner = null;
        }

        if (cfg.Subjects is { Count: 0 })
        {
            cfg.Subjects = null;
        }

        if (cfg.Sources is { Count: 0 })
        {
            cfg.Sources = null;
        }

        if (cfg.Placement is { } placement)
        {
            if (placement.Cluster == "")
            {
                placement.Cluster = null;
            }

            if (placement.Tags is { Count: 0 })
            {
                placement.Tags = null;
            }
        }
        foreach (var source in (cfg.Sources ?? []).Append(cfg.Mirror))
        {
            if (source is not null && source.FilterSubject == "")
            {
                source.FilterSubject = null;
            }
        }
    }

    private static void CheckSources(StreamConfig cfg, JsAccount account)
    {
        static JsApiException Invalid(string text) => new(JsErrors.StreamInvalidConfigF.WithErr(text));

        static bool FilterOverlaps(string? filter, List<string>? subjects) =>
            string.IsNullOrEmpty(filter) || subjects is null or { Count: 0 } || subjects.Any(s => SubjectRules.Collide(s, filter));

        var streamSubjects = new List<string>();
        if (cfg.Mirror is { } mirror)
        {
            if (cfg.Subjects is { Count: > 0 })
            {
                throw new JsApiException(JsErrors.MirrorWithSubjects);
            }
            if (cfg.Sources is { Count: > 0 })
            {
                throw new JsApiException(JsErrors.MirrorWithSources);
            }
            var origin = account.FindStream(mirror.Name)?.Config;
            if (origin?.Subjects is { } subs)
            {
                streamSubjects.AddRange(subs);
            }
            if (origin is not null)
            {
                if (cfg.MaxMsgSize > 0 && origin.MaxMsgSize > 0 && cfg.MaxMsgSize < origin.MaxMsgSize)
                {
                    throw new JsApiException(JsErrors.MirrorMaxMessageSizeTooBig);
                }
                if (!FilterOverlaps(mirror.FilterSubject, origin.Subjects))
                {
                    throw Invalid($"mirror '{mirror.Name}' filter subject '{mirror.FilterSubject}' does not overlap with any origin stream subject");
                }
                cfg.MirrorDirect = origin.AllowDirect;
            }
        }
        foreach (var source in cfg.Sources ?? [])
        {
            var origin = account.FindStream(source.Name)?.Config;
            if (origin?.Subjects is { } subs)
            {
                streamSubjects.AddRange(subs);
            }
            if (origin is not null)
            {
                if (cfg.MaxMsgSize > 0 && origin.MaxMsgSize > 0 && cfg.MaxMsgSize < origin.MaxMsgSize)
                {
                    throw new JsApiException(JsErrors.SourceMaxMessageSizeTooBig);
                }
                if (!FilterOverlaps(source.FilterSubject, streamSubjects))
                {
                    throw Invalid($"source '{source.Name}' filter subject '{source.FilterSubject}' does not overlap with any origin stream subject");
                }
            }
        }
        // Cycle check through sources and mirrors of streams that exist here.
        var toVisit = new Queue<StreamConfig>([cfg]);
        var visited = new HashSet<string>(StringComparer.Ordinal);
        while (toVisit.TryDequeue(out var current))
        {
            visited.Add(current.Name);
            foreach (var source in current.Sources ?? [])
            {
                if (source.External is not null)
                {
                    continue;
                }
                if (visited.Contains(source.Name))
                {
                    throw Invalid("detected cycle");
                }
                if (account.FindStream(source.Name)?.Config is { } next)
                {
                    toVisit.Enqueue(next);
                }
            }
            if (current.Mirror is { External: null } m)
            {
                if (visited.Contains(m.Name))
                {
                    throw Invalid("detected cycle");
                }
                if (account.FindStream(m.Name)?.Config is { } next)
                {
                    toVisit.Enqueue(next);
                }
            }
        }
    }
}
