using System.Text;
using System.Text.Json;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// The full resolver's claim subjects ($SYS.REQ.CLAIMS.UPDATE, $SYS.REQ.ACCOUNT.&lt;id&gt;.CLAIMS.UPDATE
/// and its old form $SYS.ACCOUNT.&lt;id&gt;.CLAIMS.UPDATE, .CLAIMS.LOOKUP, $SYS.REQ.CLAIMS.LIST): the
/// answers are Go's respondToUpdate and handleListRequest documents; the work is in
/// <see cref="Auth.Jwt.AccountClaimsUpdates"/>. $SYS.REQ.CLAIMS.DELETE answers the same way.
/// </summary>
internal sealed partial class SystemAccountService
{
    /// <summary>True when the claim subjects were taken; the caller then skips its placeholder subscriptions.</summary>
    private bool SubscribeClaims()
    {
        if (_server.ClaimUpdates is not { } updates)
        {
            return false;
        }
        Subscribe("$SYS.ACCOUNT.*.CLAIMS.UPDATE", Queue((subject, reply, body) => ClaimsUpdate(updates, AccountToken(subject, 2), reply, body)));
        Subscribe("$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", Queue((subject, reply, body) => ClaimsUpdate(updates, AccountToken(subject, 3), reply, body)));
        Subscribe("$SYS.REQ.CLAIMS.UPDATE", Queue((_, reply, body) => ClaimsUpdate(updates, null, reply, body)));
        Subscribe("$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP", Queue((subject, reply, _) =>
        {
            if (reply.Length > 0 && AccountToken(subject, 3) is { } key && updates.Lookup(key) is { } jwt)
            {
                PublishRaw(reply, "", Encoding.UTF8.GetBytes(jwt));
            }
        }));
        Subscribe("$SYS.REQ.CLAIMS.LIST", Queue((_, reply, _) =>
        {
            if (reply.Length == 0)
            {
                return;
            }
            var ids = updates.List();
            Publish(reply, "", json =>
            {
                json.WriteStartObject();
                json.WriteStartArray("data");
                foreach (var id in ids)
                {
                    json.WriteStringValue(id);
                }
                json.WriteEndArray();
                WriteServerInfo(json);
                json.WriteEndObject();
            });
        }));
        Subscribe("$SYS.REQ.CLAIMS.DELETE", Queue((_, reply, body) => Answer(reply, updates.Delete(Encoding.UTF8.GetString(body)))));
        return true;
    }

    private static string? AccountToken(string subject, int index)
    {
        var tokens = subject.Split('.');
        return tokens.Length > index ? tokens[index] : null;
    }

    private void ClaimsUpdate(Auth.Jwt.AccountClaimsUpdates updates, string? accountKey, string reply, byte[] body)
    {
        Answer(reply, updates.Update(accountKey, Encoding.UTF8.GetString(body)));
    }

    /// <summary>Go's respondToUpdate document.</summary>
    private void Answer(string reply, Auth.Jwt.AccountClaimsUpdates.Outcome outcome)
    {
        if (reply.Length == 0)
        {
            return;
        }
        // Go marshals a map: "data"/"error" sort before "server".
        Publish(reply, "", json =>
        {
            json.WriteStartObject();
            json.WriteStartObject(outcome.Error is null ? "data" : "error");
            if (!string.IsNullOrEmpty(outcome.Account))
            {
                json.WriteString("account", outcome.Account);
            }
            if (outcome.Error is null)
            {
                json.WriteNumber("code", 200);
                json.WriteString("message", outcome.Message);
            }
            else
            {
                json.WriteNumber("code", 500);
                json.WriteString("description", $"{outcome.Message} - {outcome.Error}");
            }
            json.WriteEndObject();
            WriteServerInfo(json);
            json.WriteEndObject();
        });
    }
}
