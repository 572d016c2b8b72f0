using Nats.Server.Configuration;

namespace Nats.Server.Accounts;

/// <summary>The imports half of the binder: Go's parseAccountImports and parseImportStreamOrService.</summary>
internal static partial class ImportExportBinder
{
    public static void ParseImports(ConfigValue value, AccountOptions account, List<string> errors)
    {
        if (value.AsList is not { } items)
        {
            errors.Add($"{value.Source}: Imports should be an array, got {value.GoTypeName}");
            return;
        }
        var serviceSubjects = new Dictionary<string, ServiceImportDefinition>(StringComparer.Ordinal);
        foreach (var item in items)
        {
            var (stream, service) = ParseImport(item, errors);
            if (service is not null)
            {
                if (serviceSubjects.TryGetValue(service.To, out var duplicate))
                {
                    errors.Add($"{item.Source}: Duplicate service import subject \"{service.To}\", previously used in import for account \"{duplicate.Account}\", subject \"{duplicate.Subject}\"");
                    continue;
                }
                serviceSubjects[service.To] = service;
                account.ServiceImportDefinitions.Add(service);
            }
            if (stream is not null)
            {
                account.StreamImportDefinitions.Add(stream);
            }
        }
    }

    private static (StreamImportDefinition? Stream, ServiceImportDefinition? Service) ParseImport(ConfigValue item, List<string> errors)
    {
        if (item.AsMap is not { } map)
        {
            errors.Add($"{item.Source}: Import Items should be a map with type entry, got {item.GoTypeName}");
            return (null, null);
        }
        StreamImportDefinition? stream = null;
        ServiceImportDefinition? service = null;
        string? prefix = null;
        string? to = null;
        var share = false;
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "stream":
                case "service":
                    var isStream = key.Equals("stream", StringComparison.OrdinalIgnoreCase);
                    if (isStream && service is not null)
                    {
                        errors.Add($"{v.Source}: Detected stream but already saw a service");
                        continue;
                    }
                    if (!isStream && stream is not null)
                    {
                        errors.Add($"{v.Source}: Detected service but already saw a stream");
                        continue;
                    }
                    if (v.AsMap is not { } reference)
                    {
                        errors.Add($"{v.Source}: {(isStream ? "Stream" : "Service")} entry should be an account map, got {v.GoTypeName}");
                        continue;
                    }
                    if (!ParseAccountReference(reference, errors, out var accountName, out var subject))
                    {
                        return (null, null);
                    }
                    if (accountName.Length == 0 || subject.Length == 0)
                    {
                        errors.Add($"{v.Source}: Expect an account name and a subject");
                        continue;
                    }
                    if (isStream)
                    {
                        stream = new StreamImportDefinition(accountName, subject, to, prefix);
                    }
                    else
                    {
                        service = new ServiceImportDefinition(accountName, subject, string.IsNullOrEmpty(to) ? subject : to, share);
                    }
                    break;
                case "prefix":
                    if (v.Value is not string p)
                    {
                        errors.Add(v.MismatchText("string"));
                        return (null, null);
                    }
                    prefix = p;
                    if (stream is not null)
                    {
                        stream = stream with { Prefix = p };
                    }
                    break;
                case "to":
                    if (v.Value is not string t)
                    {
                        errors.Add(v.MismatchText("string"));
                        return (null, null);
                    }
                    to = t;
                    if (service is not null)
                    {
                        service = service with { To = t };
                    }
                    if (stream is not null)
                    {
                        stream = stream with { To = t };
                        if (!string.IsNullOrEmpty(stream.Prefix))
                        {
                            errors.Add($"{v.Source}: Stream import can not have a 'prefix' and a 'to' property");
                            continue;
                        }
                    }
                    break;
                case "share":
                    if (v.Value is not bool b)
                    {
                        errors.Add(v.MismatchText("bool"));
                        return (null, null);
                    }
                    share = b;
                    if (service is not null)
                    {
                        service = service with { Share = b };
                    }
                    break;
                default:
                    ConfigBlock.Unknown(key, v, errors);
                    break;
            }
        }
        return (stream, service);
    }

    private static bool ParseAccountReference(Dictionary<string, ConfigValue> map, List<string> errors, out string account, out string subject)
    {
        account = "";
        subject = "";
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "account":
                case "subject":
                    if (v.Value is not string text)
                    {
                        errors.Add(v.MismatchText("string"));
                        return false;
                    }
                    if (key.Equals("account", StringComparison.OrdinalIgnoreCase))
                    {
                        account = text;
                    }
                    else
                    {
                        subject = text;
                    }
                    break;
                default:
                    ConfigBlock.Unknown(key, v, errors);
                    break;
            }
        }
        return true;
    }
}
