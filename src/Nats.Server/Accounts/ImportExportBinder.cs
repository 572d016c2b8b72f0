using Nats.Server.Configuration;

namespace Nats.Server.Accounts;

/// <summary>
/// Go's parseAccountExports/parseAccountImports (per account, while the accounts block is read) and the
/// second half of parseAccounts (<see cref="Resolve"/>), which checks every import against the
/// exporter's exports once all accounts are known. Error texts are Go's.
/// </summary>
internal static partial class ImportExportBinder
{
    public static void ParseExports(ConfigValue value, AccountOptions account, List<string> errors)
    {
        if (value.AsList is not { } items)
        {
            errors.Add($"{value.Source}: Exports should be an array, got {value.GoTypeName}");
            return;
        }
        foreach (var item in items)
        {
            if (ParseExport(item, errors) is { } export)
            {
                account.ExportDefinitions.Add(export);
            }
        }
    }

    private static ExportDefinition? ParseExport(ConfigValue item, List<string> errors)
    {
        if (item.AsMap is not { } map)
        {
            errors.Add($"{item.Source}: Export Items should be a map with type entry, got {item.GoTypeName}");
            return null;
        }
        ExportDefinition? stream = null;
        ExportDefinition? service = null;
        List<string>? accounts = null;
        ServiceResponseType? responseType = null;
        ConfigValue? responseToken = null;
        ConfigValue? latencyToken = null;
        ServiceLatencyDefinition? latency = null;
        TimeSpan? threshold = null;
        var thresholdSeen = false;
        var tokenPosition = 0;
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "stream":
                    if (service is not null)
                    {
                        errors.Add($"{v.Source}: Detected stream {GoQuoted(v)} but already saw a service");
                        continue;
                    }
                    if (responseToken is not null)
                    {
                        errors.Add($"{responseToken.Source}: Detected response directive on non-service");
                        continue;
                    }
                    if (latencyToken is not null)
                    {
                        errors.Add($"{latencyToken.Source}: Detected latency directive on non-service");
                        continue;
                    }
                    if (v.Value is not string streamSubject)
                    {
                        errors.Add($"{v.Source}: Expected stream name to be string, got {v.GoTypeName}");
                        continue;
                    }
                    stream = new ExportDefinition(streamSubject, isService: false) { Accounts = accounts };
                    break;
                case "service":
                    if (stream is not null)
                    {
                        errors.Add($"{v.Source}: Detected service {GoQuoted(v)} but already saw a stream");
                        continue;
                    }
                    if (v.Value is not string serviceSubject)
                    {
                        errors.Add($"{v.Source}: Expected service name to be string, got {v.GoTypeName}");
                        continue;
                    }
                    service = new ExportDefinition(serviceSubject, isService: true)
                    {
                        Accounts = accounts,
                        ResponseType = responseType ?? ServiceResponseType.Singleton,
                        Latency = latency,
                        ResponseThreshold = threshold,
                    };
                    break;
                case "response":
                case "response_type":
                    if (responseToken is not null)
                    {
                        errors.Add($"{v.Source}: Duplicate response type definition");
                        continue;
                    }
                    responseToken = v;
                    if (v.Value is not string typeText)
                    {
                        errors.Add($"{v.Source}: Expected response type to be string, got {v.GoTypeName}");
                        continue;
                    }
                    responseType = typeText.ToLowerInvariant() switch
                    {
                        "single" or "singleton" => ServiceResponseType.Singleton,
                        "stream" => ServiceResponseType.Streamed,
                        "chunk" or "chunked" => ServiceResponseType.Chunked,
                        _ => null,
                    };
                    if (responseType is null)
                    {
                        errors.Add($"{v.Source}: Unknown response type: \"{typeText}\"");
                        continue;
                    }
                    if (service is not null)
                    {
                        service.ResponseType = responseType.Value;
                    }
                    if (stream is not null)
                    {
                        errors.Add($"{v.Source}: Detected response directive on non-service");
                    }
                    break;
                case "threshold":
                case "response_threshold":
                case "response_max_time":
                case "response_time":
                    if (thresholdSeen)
                    {
                        errors.Add($"{v.Source}: Duplicate response threshold detected");
                        continue;
                    }
                    thresholdSeen = true;
                    if (v.Value is not string durationText)
                    {
                        errors.Add($"{v.Source}: Expected response threshold to be a parseable time duration, got {v.GoTypeName}");
                        continue;
                    }
                    if (!GoDuration.TryParse(durationText, out var parsed, out _))
                    {
                        errors.Add($"{v.Source}: Expected response threshold to be a parseable time duration, got \"{durationText}\"");
                        continue;
                    }
                    threshold = parsed;
                    if (service is not null)
                    {
                        service.ResponseThreshold = parsed;
                    }
                    if (stream is not null)
                    {
                        errors.Add($"{v.Source}: Detected response directive on non-service");
                    }
                    break;
                case "accounts":
                    if (v.AsList is not { } names)
                    {
                        errors.Add(v.MismatchText("[]interface {}"));
                        return null;
                    }
                    // Go appends to a nil list, so "accounts: []" leaves the export public.
                    accounts = null;
                    foreach (var name in names)
                    {
                        if (name.Value is not string accountName)
                        {
                            errors.Add(name.MismatchText("string"));
                            return null;
                        }
                        (accounts ??= []).Add(accountName);
                    }
                    if (stream is not null)
                    {
                        stream.Accounts = accounts;
                    }
                    else if (service is not null)
                    {
                        service.Accounts = accounts;
                    }
                    break;
                case "latency":
                    latencyToken = v;
                    latency = ParseLatency(v, errors);
                    if (latency is null)
                    {
                        continue;
                    }
                    if (stream is not null)
                    {
                        errors.Add($"{v.Source}: Detected latency directive on non-service");
                        continue;
                    }
                    if (service is not null)
                    {
                        service.Latency = latency;
                    }
                    break;
                case "account_token_position":
                    if (v.Value is not long position)
                    {
                        errors.Add(v.MismatchText("int64"));
                        return null;
                    }
                    tokenPosition = (int)position;
                    break;
                default:
                    ConfigBlock.Unknown(key, v, errors);
                    break;
            }
        }
        var result = (ExportDefinition?)stream ?? service;
        if (result is not null)
        {
            result.AccountTokenPosition = tokenPosition;
        }
        return result;
    }

    /// <summary>Go's parseServiceLatency: a results subject, or {sampling, subject}.</summary>
    private static ServiceLatencyDefinition? ParseLatency(ConfigValue v, List<string> errors)
    {
        const int defaultSampling = 100;
        if (v.Value is string subject)
        {
            return new ServiceLatencyDefinition(subject, defaultSampling);
        }
        if (v.AsMap is not { } map)
        {
            errors.Add($"{v.Source}: Expected latency entry to be a map/struct or string, got {v.GoTypeName}");
            return null;
        }
        var sampling = defaultSampling;
        if (map.TryGetValue("sampling", out var samplingValue))
        {
            var header = false;
            long sample;
            switch (samplingValue.Value)
            {
                case long n:
                    sample = n;
                    break;
                case string text when text.Trim().Equals("headers", StringComparison.OrdinalIgnoreCase):
                    header = true;
                    sample = 0;
                    break;
                case string text:
                    if (!int.TryParse(text.TrimEnd('%'), out var percent))
                    {
                        errors.Add($"{samplingValue.Source}: Failed to parse latency sample: strconv.Atoi: parsing \"{text.TrimEnd('%')}\": invalid syntax");
                        return null;
                    }
                    sample = percent;
                    break;
                default:
                    errors.Add($"{samplingValue.Source}: Expected latency sample to be a string or map/struct, got {samplingValue.GoTypeName}");
                    return null;
            }
            if (!header && sample is < 1 or > 100)
            {
                errors.Add($"{samplingValue.Source}: bad sampling percentage, should be 1-100");
                return null;
            }
            sampling = (int)sample;
        }
        if (!map.TryGetValue("subject", out var subjectValue))
        {
            errors.Add($"{v.Source}: Latency subject required, but missing");
            return null;
        }
        if (subjectValue.Value is not string results)
        {
            errors.Add($"{subjectValue.Source}: Expected latency subject to be a string, got string");
            return null;
        }
        return new ServiceLatencyDefinition(results, sampling);
    }

    private static string GoQuoted(ConfigValue v) => v.Value is string s ? $"\"{s}\"" : $"%!q({v.GoTypeName}={v.Value})";

    public static void Resolve(ServerOptions options, string blockSource, List<string> errors) =>
        new ImportExportResolver(options, blockSource, errors).Run();
}
