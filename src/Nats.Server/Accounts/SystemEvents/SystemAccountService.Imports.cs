using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// Go's registerSystemImports: every other account imports $SYS.REQ.ACCOUNT.PING.CONNZ and
/// $SYS.REQ.SERVER.PING.CONNZ (both mapped to $SYS.REQ.ACCOUNT.&lt;acc&gt;.CONNZ) and
/// $SYS.REQ.ACCOUNT.PING.STATZ (to .STATZ) from the system account, so any user can ask about its
/// own account. Until the general service-import layer serves these, the same three subscriptions
/// sit in each account's index (Go's sids 1-3, the same /subsz numbers); a request goes on into $SYS
/// on the account's own subject (clamped to the requester's account), where every server of the
/// cluster answers it as Go's streamed import lets them, and each answer comes back on this server's
/// $SYS inbox and on into the requester's account.
/// </summary>
internal sealed partial class SystemAccountService
{
    // Go's default response threshold of a streamed service export.
    private static readonly TimeSpan ImportReplyLifetime = TimeSpan.FromMinutes(2);

    private readonly Dictionary<string, (Account Account, string Reply)> _importReplies = new(StringComparer.Ordinal);
    private readonly Queue<(string Token, long Created)> _importReplyOrder = new();
    private long _importReplySeq;

    private void RegisterSystemImports()
    {
        foreach (var account in _server.Accounts.Where(a => !ReferenceEquals(a, Account)).ToList())
        {
            var connz = ImportHandler(account, $"$SYS.REQ.ACCOUNT.{account.Name}.CONNZ");
            var statz = ImportHandler(account, $"$SYS.REQ.ACCOUNT.{account.Name}.STATZ");
            Clients.InternalClient.SubscribeInAccount(_client!, account, "$SYS.REQ.ACCOUNT.PING.CONNZ", "1", connz, serviceImport: true);
            Clients.InternalClient.SubscribeInAccount(_client!, account, "$SYS.REQ.SERVER.PING.CONNZ", "2", connz, serviceImport: true);
            Clients.InternalClient.SubscribeInAccount(_client!, account, "$SYS.REQ.ACCOUNT.PING.STATZ", "3", statz, serviceImport: true);
        }
    }

    private InternalMessageHandler ImportHandler(Account account, string mapped) => (_, _, _, reply, _, body) =>
    {
        if (reply.IsEmpty)
        {
            // Go's zReq answers nothing without a reply subject.
            return true;
        }
        var replyText = Encoding.UTF8.GetString(reply);
        var bodyCopy = body.ToArray();
        Post(() => ForwardImportRequest(account, mapped, replyText, bodyCopy));
        return true;
    };

    private void ForwardImportRequest(Account account, string mapped, string reply, byte[] body)
    {
        ExpireImportReplies();
        var token = (++_importReplySeq).ToString(CultureInfo.InvariantCulture);
        _importReplies[token] = (account, reply);
        _importReplyOrder.Enqueue((token, Stopwatch.GetTimestamp()));
        PublishRaw(mapped, $"$SYS._INBOX.{ServerHash}.{token}", body);
    }

    /// <summary>An answer on $SYS._INBOX.&lt;hash&gt;.&lt;token&gt; (Go's inboxReply): on to the requester that is waiting for it.</summary>
    private void ImportReply(string subject, byte[] body)
    {
        var token = subject[(subject.LastIndexOf('.') + 1)..];
        if (_importReplies.TryGetValue(token, out var pending))
        {
            PublishRaw(pending.Reply, "", body, pending.Account);
        }
    }

    private void ExpireImportReplies()
    {
        var now = Stopwatch.GetTimestamp();
        while (_importReplyOrder.TryPeek(out var oldest) && Stopwatch.GetElapsedTime(oldest.Created, now) > ImportReplyLifetime)
        {
            _importReplyOrder.Dequeue();
            _importReplies.Remove(oldest.Token);
        }
    }
}
