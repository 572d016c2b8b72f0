using System.Text;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// Go's registerSystemImports: every other account imports $SYS.REQ.ACCOUNT.PING.CONNZ and
/// $SYS.REQ.SERVER.PING.CONNZ (both mapped to $SYS.REQ.ACCOUNT.&lt;acc&gt;.CONNZ) and
/// $SYS.REQ.ACCOUNT.PING.STATZ (to .STATZ) from the system account, so any user can ask about its
/// own account. Until the general service-import layer serves these, the same three subscriptions
/// sit in each account's index (Go's sids 1-3, the same /subsz numbers) and answer directly, clamped
/// to the requester's account; the reply comes back into that account as Go's import delivers it.
/// </summary>
internal sealed partial class SystemAccountService
{
    private void RegisterSystemImports()
    {
        foreach (var account in _server.Accounts.Where(a => !ReferenceEquals(a, Account)).ToList())
        {
            var name = account.Name;
            var connz = ImportHandler((reply, body) => ZRequest(reply, body, "ConnzEventOptions", ConnzFields,
                o => Connz(o, name), account));
            var statz = ImportHandler((reply, body) => ZRequest(reply, body, "AccountStatzEventOptions", AccountStatzFields,
                o => AccountStatz(o, [name]), account));
            Clients.InternalClient.SubscribeInAccount(_client!, account, "$SYS.REQ.ACCOUNT.PING.CONNZ", "1", connz, serviceImport: true);
            Clients.InternalClient.SubscribeInAccount(_client!, account, "$SYS.REQ.SERVER.PING.CONNZ", "2", connz, serviceImport: true);
            Clients.InternalClient.SubscribeInAccount(_client!, account, "$SYS.REQ.ACCOUNT.PING.STATZ", "3", statz, serviceImport: true);
        }
    }

    private InternalMessageHandler ImportHandler(Action<string, byte[]> work) => (_, _, _, reply, _, body) =>
    {
        var replyText = Encoding.UTF8.GetString(reply);
        var bodyCopy = body.ToArray();
        Post(() => work(replyText, bodyCopy));
        return true;
    };
}
