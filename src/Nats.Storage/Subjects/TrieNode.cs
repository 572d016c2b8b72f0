namespace Nats.Storage.Subjects;

internal sealed class TrieNode(TrieNode? parent, string token)
{
    public readonly TrieNode? Parent = parent;
    public readonly string Token = token;
    public Dictionary<string, TrieNode>? Children;
    public SubjectInfo? Value;

    public bool IsEmpty => Value is null && (Children is null || Children.Count == 0);
}
