using System.Globalization;
using System.Text;
using System.Text.Json;
using Nats.Server.Auth;
using Nats.Server.Clients;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// Go's subscriber-count services: $SYS.DEBUG.SUBSCRIBERS (a client asks how many client
/// subscriptions in its own account match "subject [queue]") and $SYS.REQ.ACCOUNT.NSUBS (the
/// cluster-wide variant servers ask each other). Only client subscriptions count, not the server's own.
/// </summary>
internal sealed partial class SystemAccountService
{
    private InternalMessageHandler DebugSubscribersHandler() => (_, publisher, _, reply, _, body) =>
    {
        // Only clients ask; the server's own publishes are not questions.
        if (publisher.Connection is not { } client || ReferenceEquals(client, _client) || reply.IsEmpty)
        {
            return true;
        }
        var account = client.Account;
        var replyText = Encoding.UTF8.GetString(reply);
        var args = Encoding.UTF8.GetString(body).Trim().Split(' ');
        var queue = args.Length > 1 ? args[1] : null;
        Post(() => PublishCount(replyText, CountClientSubscriptions(account, args[0], queue)));
        return true;
    };

    private void NumSubscriptionsRequest(string subject, string reply, byte[] body)
    {
        if (body.Length == 0 || reply.Length == 0)
        {
            return;
        }
        string? accountName;
        string subjectFilter;
        string? queue = null;
        try
        {
            using var document = JsonDocument.Parse(body);
            var root = document.RootElement;
            accountName = root.TryGetProperty("acc", out var acc) ? acc.GetString() : null;
            subjectFilter = root.TryGetProperty("subject", out var s) ? s.GetString() ?? "" : "";
            if (root.TryGetProperty("queue", out var q) && q.ValueKind == JsonValueKind.String)
            {
                // Go marshals the queue as []byte: base64 in JSON.
                queue = Encoding.UTF8.GetString(q.GetBytesFromBase64());
            }
        }
        catch (Exception ex) when (ex is JsonException or InvalidOperationException or FormatException)
        {
            return;
        }
        if (accountName is null || _server.FindAccount(accountName) is not { ClientCount: > 0 } account)
        {
            return;
        }
        PublishCount(reply, CountClientSubscriptions(account, subjectFilter, queue));
    }

    private void PublishCount(string reply, int count) =>
        PublishRaw(reply, "", Encoding.ASCII.GetBytes(count.ToString(CultureInfo.InvariantCulture)));

    /// <summary>Go's totalSubs / the subset walk: client subscriptions matching a literal subject, or covered by a wildcard one.</summary>
    private static int CountClientSubscriptions(Account account, string subject, string? queue)
    {
        static bool IsClient(Subscription s) => s.Kind == Delivery.ReceiverKind.Client;
        bool QueueMatches(Subscription s) => queue is null || s.QueueString == queue;

        if (subject.Length == 0)
        {
            return 0;
        }
        if (!SubjectRules.HasWildcard(subject))
        {
            var result = account.SubList.Match(Encoding.UTF8.GetBytes(subject));
            var count = queue is null ? result.Plain.Count(IsClient) : 0;
            foreach (var group in result.QueueGroups)
            {
                count += group.Count(s => IsClient(s) && QueueMatches(s));
            }
            return count;
        }
        return account.SubList.All().Count(s => IsClient(s) && QueueMatches(s) && SubjectRules.IsSubsetMatch(s.SubjectString, subject));
    }
}
