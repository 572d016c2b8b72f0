using System.Globalization;
using System.Text;
using Microsoft.Extensions.Logging;
using Nats.Server.Accounts;
using Nats.Server.Clients;
using Nats.Server.Delivery;
using Nats.Server.Hosting;

namespace Nats.Server.JetStream.Cluster;

/// <summary>
/// A group's RAFT traffic as plain messages in the system account, on Go's subjects: vote requests on
/// <c>$NRG.V.&lt;group&gt;</c> and appends on <c>$NRG.AE.&lt;group&gt;</c> (both with the sender's
/// <c>$NRG.R.&lt;inbox&gt;</c> as reply), responses to <c>$NRG.R.&lt;inbox&gt;</c>, catch-up appends to
/// <c>$NRG.CR.&lt;inbox&gt;</c>. Routes carry them to the other servers like any $SYS interest.
/// </summary>
/// <remarks>
/// Differences from Go: a member's inbox is not random but <c>getHash(group + " " + peer)</c>, so a response or a
/// catch-up append is addressed by peer id rather than to the reply of the message it answers; the two response
/// kinds share one inbox and are told apart by their fixed sizes (17 and 25 bytes).
/// </remarks>
internal sealed class NrgTransport : IRaftTransport
{
    private static int _sids;

    private readonly NatsServer _server;
    private readonly Account _system;
    private readonly string _group;
    private readonly byte[] _voteSubject;
    private readonly byte[] _appendSubject;
    private readonly byte[] _reply;
    private readonly InternalPublisher _publisher;
    private readonly Dictionary<string, (byte[] Response, byte[] Catchup)> _inboxes = [];

    public NrgTransport(NatsServer server, Account system, string group, string self)
    {
        _server = server;
        _system = system;
        _group = group;
        _voteSubject = Encoding.ASCII.GetBytes($"$NRG.V.{group}");
        _appendSubject = Encoding.ASCII.GetBytes($"$NRG.AE.{group}");
        _reply = Encoding.ASCII.GetBytes($"$NRG.R.{Inbox(group, self)}");
        _publisher = server.CreateInternalPublisher();
        Self = self;
    }

    public string Self { get; }

    public static string Inbox(string group, string peer) => NameHash.Of(group + " " + peer);

    /// <summary>Subscribes the group's subjects and this member's inboxes; messages go to <paramref name="runner"/>.</summary>
    public void Start(RaftRunner runner, ILogger logger)
    {
        var client = InternalClient.Create(_server, _server.NextClientId(), _system, logger);
        var inbox = Inbox(_group, Self);
        Subscribe(client, $"$NRG.V.{_group}", (_, _, _, _, _, body) => Deliver(runner, RaftMessageKind.VoteRequest, body));
        Subscribe(client, $"$NRG.AE.{_group}", (_, _, _, _, _, body) => Deliver(runner, RaftMessageKind.AppendEntry, body));
        Subscribe(client, $"$NRG.CR.{inbox}", (_, _, _, _, _, body) => Deliver(runner, RaftMessageKind.AppendEntry, body));
        Subscribe(client, $"$NRG.R.{inbox}", (_, _, _, _, _, body) => Deliver(runner,
            body.Length == RaftWire.VoteResponseLength ? RaftMessageKind.VoteResponse : RaftMessageKind.AppendEntryResponse, body));
    }

    private static void Subscribe(ClientConnection client, string subject, Accounts.SystemEvents.InternalMessageHandler handler) =>
        InternalClient.Subscribe(client, subject, "nrg" + Interlocked.Increment(ref _sids).ToString(CultureInfo.InvariantCulture), handler);

    private static bool Deliver(RaftRunner runner, RaftMessageKind kind, ReadOnlySpan<byte> body)
    {
        runner.Deliver(kind, body.ToArray());
        return true;
    }

    public void Broadcast(RaftMessageKind kind, byte[] payload) =>
        _publisher.Publish(_system, kind == RaftMessageKind.VoteRequest ? _voteSubject : _appendSubject, _reply, default, payload);

    public void Send(string peer, RaftMessageKind kind, byte[] payload)
    {
        if (!_inboxes.TryGetValue(peer, out var inbox))
        {
            var token = Inbox(_group, peer);
            inbox = (Encoding.ASCII.GetBytes($"$NRG.R.{token}"), Encoding.ASCII.GetBytes($"$NRG.CR.{token}"));
            _inboxes[peer] = inbox;
        }
        _publisher.Publish(_system, kind == RaftMessageKind.AppendEntry ? inbox.Catchup : inbox.Response, default, default, payload);
    }
}
