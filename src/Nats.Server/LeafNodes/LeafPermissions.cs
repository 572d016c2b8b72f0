using Nats.Server.Auth;

namespace Nats.Server.LeafNodes;

/// <summary>
/// What a leaf connection may carry (Go's perms on a LEAF client, deny side only): a publish deny stops a
/// message from going out on it (deny_exports, the hub's deny_pub, JetStream's API), a subscribe deny stops
/// our interest in a subject from being announced (deny_imports). Set during the handshake, read after.
/// </summary>
internal sealed class LeafPermissions
{
    /// <summary>Go's denyAllClientJs: without a shared JetStream domain the API stays on its side of the leaf.</summary>
    public static readonly string[] JetStreamDenies = ["$JS.API.>", "$KV.>", "$OBJ.>"];

    private readonly List<string> _publishDeny = [];
    private readonly List<string> _subscribeDeny = [];
    private volatile SubjectPatterns? _publish;
    private volatile SubjectPatterns? _subscribe;

    public IReadOnlyList<string> PublishDeny => _publishDeny;
    public IReadOnlyList<string> SubscribeDeny => _subscribeDeny;

    public void AddPublishDeny(IEnumerable<string> subjects)
    {
        lock (_publishDeny)
        {
            _publishDeny.AddRange(subjects.Where(s => !_publishDeny.Contains(s)));
            _publish = _publishDeny.Count == 0 ? null : SubjectPatterns.Compile(_publishDeny, allowQueues: false);
        }
    }

    public void AddSubscribeDeny(IEnumerable<string> subjects)
    {
        lock (_subscribeDeny)
        {
            _subscribeDeny.AddRange(subjects.Where(s => !_subscribeDeny.Contains(s)));
            _subscribe = _subscribeDeny.Count == 0 ? null : SubjectPatterns.Compile(_subscribeDeny, allowQueues: false);
        }
    }

    public bool MayPublish(ReadOnlySpan<byte> subject) => _publish is not { } deny || !deny.MatchesPlain(subject);

    public bool MaySubscribe(ReadOnlySpan<byte> subject) => _subscribe is not { } deny || !deny.MatchesPlain(subject);
}
