using Nats.Server.Subscriptions;

namespace Nats.Server.Accounts;

/// <summary>
/// An isolated subject space. Until accounts are configurable every client lives in the global
/// account "$G", as in the Go server without an accounts block.
/// </summary>
internal sealed class Account
{
    public const string GlobalAccountName = "$G";

    public Account(string name)
    {
        Name = name;
    }

    public string Name { get; }

    public SubList SubList { get; } = new();

    /// <summary>Subject mappings applied to what this account's clients publish; null when there are none.</summary>
    public Mappings.SubjectMapper? Mappings { get; set; }
}
