using Nats.Server.Configuration;

namespace Nats.Server.JetStream.Configuration;

/// <summary>
/// Binds the <c>jetstream</c> key (server and account level) with Go's parseJetStream and
/// parseJetStreamForAccount rules and error texts.
/// </summary>
internal static class JetStreamConfigBinder
{
    /// <summary>Returns an error text (with position) or null; unknown fields are appended to <paramref name="errors"/>.</summary>
    public static string? BindServer(ConfigValue v, ServerOptions options, List<string> errors)
    {
        var js = options.JetStream;
        switch (v.Value)
        {
            case bool b:
                js.Enabled = b;
                return null;
            case string s:
                switch (s.ToLowerInvariant())
                {
                    case "enabled" or "enable":
                        js.Enabled = true;
                        return null;
                    case "disabled" or "disable":
                        js.Enabled = false;
                        return null;
                    default:
                        return $"{v.Source}: Expected 'enabled' or 'disabled' for string value, got '{s}'";
                }
            case Dictionary<string, ConfigValue> map:
                var enable = true;
                foreach (var (key, item) in map)
                {
                    switch (key.ToLowerInvariant())
                    {
                        case "store" or "store_dir" or "storedir":
                            if (js.StoreDir != "")
                            {
                                return $"{item.Source}: Duplicate 'store_dir' configuration";
                            }
                            js.StoreDir = item.Value as string ?? "";
                            break;
                        case "max_memory_store" or "max_mem_store" or "max_mem":
                            if (!item.TryStorageSize(out var mem, out var memError))
                            {
                                return $"{item.Source}: max_mem_store {memError}";
                            }
                            js.MaxMemory = mem;
                            break;
                        case "max_file_store" or "max_file":
                            if (!item.TryStorageSize(out var file, out var fileError))
                            {
                                return $"{item.Source}: max_file_store {fileError}";
                            }
                            js.MaxStore = file;
                            break;
                        case "domain":
                            js.Domain = item.Value as string ?? "";
                            break;
                        case "enable" or "enabled":
                            enable = item.Value is true;
                            break;
                        case "unique_tag":
                            js.UniqueTag = (item.Value as string ?? "").Trim().ToLowerInvariant();
                            break;
                        case "max_outstanding_catchup":
                            if (!item.TryStorageSize(out var catchup, out var catchupError))
                            {
                                return $"{item.Source}: {key.ToLowerInvariant()} {catchupError}";
                            }
                            js.MaxCatchup = catchup;
                            break;
                        case "sync_interval" or "sync":
                            // Go 2.10's key; 2.9.10 rejects it as unknown. Accepted so newer configurations run.
                            if (item.Value is string text && text.Equals("always", StringComparison.OrdinalIgnoreCase))
                            {
                                js.SyncAlways = true;
                            }
                            else if (item.Value is string durationText && GoDuration.TryParse(durationText, out var interval, out _))
                            {
                                js.SyncInterval = interval;
                            }
                            else
                            {
                                return $"{item.Source}: error parsing sync_interval: invalid duration";
                            }
                            break;
                        case "limits":
                            BindLimits(item, js, errors);
                            break;
                        case "key" or "ek" or "encryption_key" or "cipher" or "extension_hint":
                            errors.Add($"{item.Source}: JetStream encryption ({key}) is not supported by nats-net-server");
                            break;
                        default:
                            ConfigBlock.Unknown(key, item, errors);
                            break;
                    }
                }
                js.Enabled = enable;
                return null;
            default:
                return $"{v.Source}: Expected map, bool or string to define JetStream, got {v.GoTypeName}";
        }
    }

    private static void BindLimits(ConfigValue v, JetStreamOptions js, List<string> errors)
    {
        if (v.AsMap is not { } map)
        {
            errors.Add($"{v.Source}: Expected a map to define JetStreamLimits, got {v.GoTypeName}");
            return;
        }
        foreach (var (key, item) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "max_ack_pending":
                    js.MaxAckPending = item.Value is long l ? (int)l : 0;
                    break;
                case "max_ha_assets":
                    break;
                case "max_request_batch":
                    js.MaxRequestBatch = item.Value is long b ? (int)b : 0;
                    break;
                case "duplicate_window":
                    if (item.Value is string d && GoDuration.TryParse(d, out var window, out _))
                    {
                        js.MaxDuplicateWindow = window;
                    }
                    else
                    {
                        errors.Add($"{item.Source}: error parsing duplicate_window");
                    }
                    break;
                default:
                    ConfigBlock.Unknown(key, item, errors);
                    break;
            }
        }
    }

    /// <summary>Go's parseJetStreamForAccount: null when disabled, the limits otherwise.</summary>
    public static JetStreamAccountLimits? BindAccount(ConfigValue v, List<string> errors)
    {
        switch (v.Value)
        {
            case bool b:
                return b ? JetStreamAccountLimits.Unlimited : null;
            case string s:
                switch (s.ToLowerInvariant())
                {
                    case "enabled" or "enable":
                        return JetStreamAccountLimits.Unlimited;
                    case "disabled" or "disable":
                        return null;
                    default:
                        errors.Add($"{v.Source}: Expected 'enabled' or 'disabled' for string value, got '{s}'");
                        return null;
                }
            case Dictionary<string, ConfigValue> map:
                var limits = JetStreamAccountLimits.Unlimited;
                foreach (var (key, item) in map)
                {
                    string SizeError() => $"{item.Source}: Expected a parseable size for \"{key}\", got {GoConfigText.Value(item)}";
                    switch (key.ToLowerInvariant())
                    {
                        case "max_memory" or "max_mem" or "mem" or "memory":
                            if (item.Value is not long mem) { errors.Add(SizeError()); return null; }
                            limits = limits with { MaxMemory = mem };
                            break;
                        case "max_store" or "max_file" or "max_disk" or "store" or "disk":
                            if (item.Value is not long store) { errors.Add(SizeError()); return null; }
                            limits = limits with { MaxStore = store };
                            break;
                        case "max_streams" or "streams":
                            if (item.Value is not long streams) { errors.Add(SizeError()); return null; }
                            limits = limits with { MaxStreams = (int)streams };
                            break;
                        case "max_consumers" or "consumers":
                            if (item.Value is not long consumers) { errors.Add(SizeError()); return null; }
                            limits = limits with { MaxConsumers = (int)consumers };
                            break;
                        case "max_bytes_required" or "max_stream_bytes" or "max_bytes":
                            if (item.Value is not bool required)
                            {
                                errors.Add($"{item.Source}: Expected a parseable bool for \"{key}\", got {GoConfigText.Value(item)}");
                                return null;
                            }
                            limits = limits with { MaxBytesRequired = required };
                            break;
                        case "mem_max_stream_bytes" or "memory_max_stream_bytes":
                            if (item.Value is not long memMax) { errors.Add(SizeError()); return null; }
                            limits = limits with { MemoryMaxStreamBytes = memMax };
                            break;
                        case "disk_max_stream_bytes" or "store_max_stream_bytes":
                            if (item.Value is not long diskMax) { errors.Add(SizeError()); return null; }
                            limits = limits with { StoreMaxStreamBytes = diskMax };
                            break;
                        case "max_ack_pending":
                            if (item.Value is not long ackPending) { errors.Add(SizeError()); return null; }
                            limits = limits with { MaxAckPending = (int)ackPending };
                            break;
                        default:
                            ConfigBlock.Unknown(key, item, errors);
                            break;
                    }
                }
                return limits;
            default:
                errors.Add($"{v.Source}: Expected map, bool or string to define JetStream, got {v.GoTypeName}");
                return null;
        }
    }
}
