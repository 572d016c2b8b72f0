using Nats.Server.Accounts;
using Nats.Server.JetStream.Configuration;
using Nats.Server.Mappings;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's buildInternalAccount/UpdateAccountClaims for the parts an <see cref="AccountOptions"/> holds:
/// limits, default permissions, mappings, and exports and imports as definitions for the same
/// resolution step configured accounts go through.
/// </summary>
internal static class AccountFromClaims
{
    public static AccountOptions Options(AccountClaims claims)
    {
        var limits = claims.Nats.Limits;
        var options = new AccountOptions(claims.Subject)
        {
            Nkey = claims.Subject,
            Limits = new AccountLimits(Clamp(limits.Conn), Clamp(limits.Subs), Clamp(limits.Payload), Clamp(limits.LeafNodeConn)),
            DefaultPermissions = Permissions(claims.Nats.DefaultPermissions?.Pub, claims.Nats.DefaultPermissions?.Sub, claims.Nats.DefaultPermissions?.Resp),
            Mappings = [.. (claims.Nats.Mappings ?? []).Select(m => new SubjectMapping(m.Key,
                [.. m.Value.Select(d => new MappingDestination(d.Subject, d.Weight == 0 ? 100 : d.Weight, d.Cluster ?? ""))]))],
        };
        options.JetStreamLimits = JetStreamLimits(limits);
        foreach (var export in claims.Nats.Exports ?? [])
        {
            if (Export(export) is { } definition)
            {
                options.ExportDefinitions.Add(definition);
            }
        }
        foreach (var import in claims.Nats.Imports ?? [])
        {
            AddImport(options, import);
        }
        return options;
    }

    /// <summary>
    /// Go's jsLimits from the claims: the global limits when they give storage, else the tiers, of which a
    /// single server has R1 streams only; null when the claims do not enable JetStream.
    /// </summary>
    private static JetStreamAccountLimits? JetStreamLimits(OperatorLimits limits)
    {
        if (!limits.JetStreamEnabled)
        {
            return null;
        }
        if (limits.MemoryStorage != 0 || limits.DiskStorage != 0)
        {
            return Limits(limits.MemoryStorage, limits.DiskStorage, limits.Streams, limits.Consumer, limits.MaxAckPending,
                limits.MemoryMaxStreamBytes, limits.DiskMaxStreamBytes, limits.MaxBytesRequired);
        }
        var tiers = limits.TieredLimits!;
        var names = new HashSet<string>(tiers.Keys, StringComparer.Ordinal);
        if (tiers.GetValueOrDefault("R1") is not { } tier)
        {
            return new JetStreamAccountLimits { TierNames = names };
        }
        return Limits(tier.MemoryStorage, tier.DiskStorage, tier.Streams, tier.Consumer, tier.MaxAckPending,
            tier.MemoryMaxStreamBytes, tier.DiskMaxStreamBytes, tier.MaxBytesRequired) with
        { TierNames = names };
    }

    private static JetStreamAccountLimits Limits(long memory, long disk, long streams, long consumers, long maxAckPending, long memoryStreamBytes, long diskStreamBytes, bool maxBytesRequired) => new()
    {
        MaxMemory = memory,
        MaxStore = disk,
        MaxStreams = (int)streams,
        MaxConsumers = (int)consumers,
        MaxAckPending = (int)Unlimited(maxAckPending),
        MemoryMaxStreamBytes = Unlimited(memoryStreamBytes),
        StoreMaxStreamBytes = Unlimited(diskStreamBytes),
        MaxBytesRequired = maxBytesRequired,
    };

    /// <summary>Go's toUnlimited: anything but a positive value means no limit.</summary>
    private static long Unlimited(long value) => value > 0 ? value : -1;

    /// <summary>The export as Go's UpdateAccountClaims adds it: token-required exports approve no account by name.</summary>
    private static ExportDefinition? Export(JwtExport export)
    {
        if (!export.IsService && !export.IsStream)
        {
            return null;
        }
        var definition = new ExportDefinition(export.Subject, export.IsService)
        {
            TokenRequired = export.TokenRequired,
            Revocations = export.Revocations,
            AccountTokenPosition = (int)export.AccountTokenPosition,
        };
        if (export.IsService)
        {
            definition.ResponseType = export.ResponseType switch
            {
                "Stream" => ServiceResponseType.Streamed,
                "Chunked" => ServiceResponseType.Chunked,
                _ => ServiceResponseType.Singleton,
            };
            if (export.ResponseThresholdNanos != 0)
            {
                definition.ResponseThreshold = TimeSpan.FromTicks(export.ResponseThresholdNanos / 100);
            }
        }
        return definition;
    }

    /// <summary>
    /// Go's subject roles: a stream's deprecated <c>to</c> is a prefix and <c>local_subject</c> the local
    /// name; a service's local subject is <c>local_subject</c> (then <c>subject</c> is the exporter's)
    /// or else <c>subject</c> (then <c>to</c>, when set, is the exporter's).
    /// </summary>
    private static void AddImport(AccountOptions options, JwtImport import)
    {
        if (import.IsStream)
        {
            options.StreamImportDefinitions.Add(string.IsNullOrEmpty(import.LocalSubject)
                ? new StreamImportDefinition(import.Account, import.Subject, null, import.To) { Token = import.Token }
                : new StreamImportDefinition(import.Account, import.Subject, import.LocalSubject, null) { Token = import.Token });
        }
        else if (import.IsService)
        {
            var local = string.IsNullOrEmpty(import.LocalSubject) ? import.Subject : import.LocalSubject;
            var remote = !string.IsNullOrEmpty(import.LocalSubject) ? import.Subject : string.IsNullOrEmpty(import.To) ? import.Subject : import.To;
            options.ServiceImportDefinitions.Add(new ServiceImportDefinition(import.Account, remote, local, import.Share) { Token = import.Token });
        }
    }

    /// <summary>Go's buildPermissionsFromJwt / buildInternalNkeyUser: only the lists that are present count.</summary>
    public static Permissions? Permissions(JwtPermission? pub, JwtPermission? sub, JwtResponsePermission? resp)
    {
        Permissions? p = null;
        if (pub is { IsEmpty: false })
        {
            p = new Permissions { Publish = new SubjectPermission { Allow = pub.Allow, Deny = pub.Deny } };
        }
        if (sub is { IsEmpty: false })
        {
            p ??= new Permissions();
            p.Subscribe = new SubjectPermission { Allow = sub.Allow, Deny = sub.Deny };
        }
        if (resp is not null)
        {
            p ??= new Permissions();
            p.Response = new ResponsePermission { MaxMsgs = resp.MaxMsgs, Expires = TimeSpan.FromTicks(resp.ExpiresNanos / 100) };
        }
        return p;
    }

    /// <summary>JWT limits are int64; the server's are int, truncated as Go's int32 conversion does.</summary>
    private static int Clamp(long value) => unchecked((int)value);
}
