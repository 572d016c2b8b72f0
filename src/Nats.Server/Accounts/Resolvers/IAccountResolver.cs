namespace Nats.Server.Accounts.Resolvers;

/// <summary>
/// Where operator mode finds account JWTs (Go's AccountResolver): by account public key. Fetch
/// returns null for an unknown account.
/// </summary>
internal interface IAccountResolver
{
    string? Fetch(string accountKey);

    void Store(string accountKey, string jwt);

    /// <summary>Every stored account key (the full resolver's CLAIMS.LIST).</summary>
    IReadOnlyList<string> List();

    /// <summary>Removes a stored JWT; false when there was none.</summary>
    bool Delete(string accountKey);

    /// <summary>Whether <c>$SYS.REQ.CLAIMS.UPDATE</c> and friends are served (the directory resolvers).</summary>
    bool TracksUpdates { get; }

    bool AllowDelete { get; }
}
