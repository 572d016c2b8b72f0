using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;
using Nats.Server.Auth.Jwt;

namespace Nats.Server.Hosting;

/// <summary>
/// The operator-mode fields of Go 2.9.10's diffOptions, which come last in its Options struct:
/// TrustedKeys and TrustedOperators cannot change; the resolver cannot come or go, and otherwise always
/// counts as changed (Go's resolver objects never compare equal), which reloads the accounts.
/// </summary>
internal static class OperatorReload
{
    public static void Diff(List<ReloadChange> changes, OperatorOptions old, OperatorOptions neu)
    {
        // Go wipes the running trusted keys when operators filled them in; the new ones are as configured.
        var oldKeys = old.TrustedOperators.Count > 0 ? [] : (old.TrustedKeys ?? []).Order(StringComparer.Ordinal).ToList();
        var newKeys = (neu.TrustedKeys ?? []).Order(StringComparer.Ordinal).ToList();
        if (!oldKeys.SequenceEqual(newKeys))
        {
            throw new ReloadPlan.RefusedException($"config reload not supported for TrustedKeys: old=[{string.Join(' ', oldKeys)}], new=[{string.Join(' ', newKeys)}]");
        }
        var oldOperators = old.TrustedOperators.OrderBy(o => o.Issuer, StringComparer.Ordinal).ToList();
        var newOperators = neu.TrustedOperators.OrderBy(o => o.Issuer, StringComparer.Ordinal).ToList();
        if (!oldOperators.Select(o => o.Token).SequenceEqual(newOperators.Select(o => o.Token)))
        {
            throw new ReloadPlan.RefusedException($"config reload not supported for TrustedOperators: old={Format(oldOperators)}, new={Format(newOperators)}");
        }
        var hadResolver = HasResolver(old);
        if (hadResolver != HasResolver(neu))
        {
            throw new ReloadPlan.RefusedException("config reload does not support moving to or from an account resolver");
        }
        if (hadResolver)
        {
            changes.Add(new(ReloadEffect.Resolver, "Reloaded: accounts"));
        }
    }

    /// <summary>Go builds a URL resolver from a lone operator's account_server_url, even an empty one.</summary>
    public static bool HasResolver(OperatorOptions options) => options.Resolver is not null || options.TrustedOperators.Count == 1;

    /// <summary>Go's %v of []*jwt.OperatorClaims: each claim's String(), its JSON indented by two spaces.</summary>
    private static string Format(List<OperatorClaims> operators)
    {
        var sb = new StringBuilder("[");
        for (var i = 0; i < operators.Count; i++)
        {
            if (i > 0)
            {
                sb.Append(' ');
            }
            sb.Append(Indented(operators[i].Token));
        }
        return sb.Append(']').ToString();
    }

    private static readonly JsonSerializerOptions GoIndent = new() { WriteIndented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    private static string Indented(string token)
    {
        var parts = token.Split('.');
        if (parts.Length != 3)
        {
            return token;
        }
        try
        {
            var payload = parts[1].Replace('-', '+').Replace('_', '/');
            payload += new string('=', (4 - payload.Length % 4) % 4);
            return JsonNode.Parse(Convert.FromBase64String(payload))?.ToJsonString(GoIndent) ?? token;
        }
        catch (Exception e) when (e is FormatException or JsonException)
        {
            return token;
        }
    }
}
