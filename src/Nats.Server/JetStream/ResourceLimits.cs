using Nats.Server.JetStream.Api;
using Nats.Server.JetStream.Configuration;

namespace Nats.Server.JetStream;

/// <summary>
/// Go 2.9.10's resource limits for a standalone server: the server's <c>max_memory_store</c> /
/// <c>max_file_store</c> and an account's <c>max_memory</c> / <c>max_file</c>. On stream create and update
/// the streams' reservations (their <c>max_bytes</c>) are checked (Go's checkAllLimits:
/// 10028/10047); on publish the server's usage is checked before storing (10023 "insufficient
/// resources") and the account's after storing (10002, the message is removed again), as Go does. The
/// publish checks cost nothing unless such a limit is configured.
/// </summary>
internal sealed class ResourceLimits(JetStreamService service)
{
    /// <summary>Go's checkAllLimits for a new stream (<paramref name="old"/> null) or an update.</summary>
    public void CheckStream(JsAccount js, StreamConfig cfg, StreamConfig? old)
    {
        var limits = js.Limits;
        if (cfg.MaxConsumers > 0 && limits.MaxConsumers > 0 && cfg.MaxConsumers > limits.MaxConsumers)
        {
            throw new JsApiException(JsErrors.MaximumConsumersLimit);
        }
        var memory = cfg.Storage == StorageKind.Memory;
        var reserved = 0L;
        foreach (var stream in js.Streams())
        {
            var other = stream.Config;
            if (other.MaxBytes > 0 && (other.Storage == StorageKind.Memory) == memory && other.Name != cfg.Name)
            {
                reserved += other.MaxBytes;
            }
        }
        long addBytes;
        if (old is null)
        {
            addBytes = cfg.MaxBytes < 0 ? 1 : cfg.MaxBytes;
        }
        else
        {
            // Only growth is reserved; Go adds the old value to the reservation as is (-1 when unset).
            addBytes = Math.Max(cfg.MaxBytes - old.MaxBytes, 0);
            reserved += old.MaxBytes;
        }
        var error = memory ? JsErrors.MemoryResourcesExceeded : JsErrors.StorageResourcesExceeded;
        var accountMax = memory ? limits.MaxMemory : limits.MaxStore;
        if (accountMax >= 0 && reserved + addBytes > accountMax)
        {
            throw new JsApiException(error);
        }
        var totals = service.Totals();
        var serverMax = memory ? totals.MaxMemory : totals.MaxStore;
        if (ServerReserved(memory) + addBytes > serverMax)
        {
            throw new JsApiException(error);
        }
    }

    /// <summary>Go's js.limitsExceeded before storing: the server already uses more than its configured maximum.</summary>
    public bool ServerExceeded(StorageKind storage)
    {
        var memory = storage == StorageKind.Memory;
        var max = memory ? service.Options.MaxMemory : service.Options.MaxStore;
        if (max == JetStreamOptions.Dynamic)
        {
            return false;
        }
        var used = 0UL;
        foreach (var js in service.Accounts)
        {
            used += Used(js, memory);
        }
        return used > (ulong)max;
    }

    /// <summary>Go's jsa.limitsExceeded after storing: the account's usage of this storage is over its limit.</summary>
    public static bool AccountExceeded(JsAccount js, StorageKind storage)
    {
        var limits = js.Limits;
        var memory = storage == StorageKind.Memory;
        var max = memory ? limits.MaxMemory : limits.MaxStore;
        var maxStreamBytes = memory ? limits.MemoryMaxStreamBytes : limits.StoreMaxStreamBytes;
        if (max < 0 && maxStreamBytes <= 0)
        {
            return false;
        }
        var used = Used(js, memory);
        // Go compares the account's total with the per-stream maximum too.
        return (maxStreamBytes > 0 && used > (ulong)maxStreamBytes) || (max >= 0 && used > (ulong)max);
    }

    private long ServerReserved(bool memory)
    {
        var reserved = 0L;
        foreach (var js in service.Accounts)
        {
            foreach (var stream in js.Streams())
            {
                if (stream.Config.MaxBytes > 0 && (stream.Config.Storage == StorageKind.Memory) == memory)
                {
                    reserved += stream.Config.MaxBytes;
                }
            }
        }
        return reserved;
    }

    private static ulong Used(JsAccount js, bool memory)
    {
        var used = 0UL;
        foreach (var stream in js.Streams())
        {
            if ((stream.Config.Storage == StorageKind.Memory) == memory)
            {
                used += stream.Store.FastState().Bytes;
            }
        }
        return used;
    }
}
