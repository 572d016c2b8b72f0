using Nats.Server.Accounts;

namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's checkActivation: an import's activation token admits the importer to a token-required export
/// when jwt.Import.Validate accepts it, the exporter (or one of its signing keys) issued it, it is in
/// its time window and the export has not revoked it.
/// </summary>
internal static class ActivationValidation
{
    /// <param name="token">The import's activation token.</param>
    /// <param name="importerKey">The importing account.</param>
    /// <param name="exporter">The exporting account's JWT (its key and signing keys).</param>
    /// <param name="grant">The export the import matched (its activation revocations).</param>
    /// <param name="subject">The exporter-side subject of the import.</param>
    /// <param name="isService">Service (else stream) import.</param>
    /// <param name="now">Unix seconds.</param>
    public static bool IsValid(string? token, string importerKey, AccountJwt exporter, ExportGrant grant, string subject, bool isService, long now)
    {
        if (string.IsNullOrEmpty(token))
        {
            return false;
        }
        ActivationClaims activation;
        try
        {
            activation = JwtDecoder.DecodeActivation(token);
        }
        catch (JwtException)
        {
            return false;
        }
        var exporterKey = exporter.Claims.Subject;
        var issuerAccount = activation.Nats.IssuerAccount;
        // jwt.Import.Validate.
        if (activation.Issuer != exporterKey && issuerAccount != exporterKey)
        {
            return false;
        }
        if (activation.Subject != importerKey || activation.Nats.ImportType != (isService ? "service" : "stream"))
        {
            return false;
        }
        if (!IsContainedIn(subject, activation.Nats.ImportSubject ?? ""))
        {
            return false;
        }
        // isIssuerClaimTrusted: a token issued for the account by a key must be one of its signers.
        if (!string.IsNullOrEmpty(issuerAccount) && (issuerAccount != exporterKey || !exporter.HasIssuer(activation.Issuer, out _)))
        {
            return false;
        }
        var times = new JwtValidation();
        activation.ValidateTimes(times, now);
        if (times.IsBlocking(true) || (activation.Expires != 0 && activation.Expires <= now))
        {
            return false;
        }
        return grant.Revocations is null || !AccountJwt.IsRevoked(grant.Revocations, activation.Subject, activation.IssuedAt);
    }

    /// <summary>
    /// jwt.Import.Validate, run by AccountClaims.Validate: errors here make the whole account JWT
    /// invalid. The activation's own time window is not checked here (checkActivation does).
    /// </summary>
    public static void ValidateImport(JwtImport import, string accountKey, JwtValidation result)
    {
        if (!import.IsService && !import.IsStream)
        {
            result.AddError($"invalid import type: {GoQuote.Quote(import.Type ?? "")}");
        }
        if (string.IsNullOrEmpty(import.Account))
        {
            result.AddError("account to import from is not specified");
        }
        if (!string.IsNullOrEmpty(import.LocalSubject) && !string.IsNullOrEmpty(import.To))
        {
            result.AddError("Local Subject replaces To");
        }
        if (import.Share && !import.IsService)
        {
            result.AddError($"sharing information (for latency tracking) is only valid for services: {GoQuote.Quote(import.Subject)}");
        }
        if (string.IsNullOrEmpty(import.Token))
        {
            return;
        }
        ActivationClaims activation;
        try
        {
            activation = JwtDecoder.DecodeActivation(import.Token);
        }
        catch (JwtException)
        {
            result.AddError($"import {GoQuote.Quote(import.Subject)} contains an invalid activation token");
            return;
        }
        if (activation.Issuer != import.Account && activation.Nats.IssuerAccount != import.Account)
        {
            result.AddError($"activation token doesn't match account for import {GoQuote.Quote(import.Subject)}");
        }
        if (activation.Subject != accountKey)
        {
            result.AddError($"activation token doesn't match account it is being included in, {GoQuote.Quote(import.Subject)}");
        }
        if (activation.Nats.ImportType != import.Type)
        {
            result.AddError($"mismatch between token import type {activation.Nats.ImportType} and type of import {import.Type}");
        }
        var subject = import.IsService && !string.IsNullOrEmpty(import.To) ? import.To : import.Subject;
        if (!IsContainedIn(subject, activation.Nats.ImportSubject ?? ""))
        {
            result.AddError($"activation token import subject {GoQuote.Quote(activation.Nats.ImportSubject ?? "")} doesn't match import {GoQuote.Quote(import.Subject)}");
        }
    }

    /// <summary>jwt.Subject.IsContainedIn: token-wise, '*' matching one token and a final '&gt;' the rest (a '&gt;' in the same position as a last token matches too).</summary>
    internal static bool IsContainedIn(string subject, string other)
    {
        var mine = subject.Split('.');
        var theirs = other.Split('.');
        if (mine.Length > theirs.Length && theirs[^1] != ">")
        {
            return false;
        }
        if (mine.Length < theirs.Length)
        {
            return false;
        }
        for (var i = 0; i < theirs.Length; i++)
        {
            if (i == theirs.Length - 1 && theirs[i] == ">")
            {
                return true;
            }
            if (theirs[i] != mine[i] && theirs[i] != "*")
            {
                return false;
            }
        }
        return true;
    }
}
