using Nats.Server.Configuration;

namespace Nats.Server.Accounts;

/// <summary>
/// One entry of the <c>accounts {}</c> block. Users declared in the account are bound into
/// <see cref="ServerOptions.Users"/>/<see cref="ServerOptions.Nkeys"/> with their Account set to <see cref="Name"/>;
/// what is left here is the account's own configuration.
/// </summary>
public sealed class AccountOptions
{
    public AccountOptions(string name) => Name = name;

    public string Name { get; }

    /// <summary>Public account nkey ("A..."), informational without operator mode.</summary>
    public string? Nkey { get; set; }

    /// <summary>default_permissions: given to this account's users that have none of their own.</summary>
    public Auth.Permissions? DefaultPermissions { get; set; }

    public AccountLimits Limits { get; set; } = AccountLimits.Unlimited;

    /// <summary>The <c>exports</c> list as written (plain tree: maps, lists, scalars), bound by the import/export layer.</summary>
    public object? Exports { get; set; }

    /// <summary>The <c>imports</c> list as written (plain tree).</summary>
    public object? Imports { get; set; }

    /// <summary>The account's <c>mappings</c> block.</summary>
    public List<Mappings.SubjectMapping> Mappings { get; set; } = [];

    /// <summary>The exports as parsed (before the accounts they name are checked).</summary>
    public List<ExportDefinition> ExportDefinitions { get; } = [];

    public List<StreamImportDefinition> StreamImportDefinitions { get; } = [];

    public List<ServiceImportDefinition> ServiceImportDefinitions { get; } = [];

    /// <summary>Exports and imports accepted by the resolution step (Go's second half of parseAccounts).</summary>
    internal List<ResolvedStreamExport> StreamExports { get; } = [];

    internal List<ResolvedServiceExport> ServiceExports { get; } = [];

    internal List<ResolvedStreamImport> StreamImports { get; } = [];

    internal List<ResolvedServiceImport> ServiceImports { get; } = [];

    /// <summary>The account's <c>jetstream</c> setting as written.</summary>
    internal ConfigValue? JetStream { get; set; }

    /// <summary>The account's JetStream limits; null when the account has no (or a disabled) <c>jetstream</c> setting.</summary>
    public JetStream.Configuration.JetStreamAccountLimits? JetStreamLimits { get; set; }
}

/// <summary>The account <c>limits {}</c> block; -1 means no limit (Go's jwt.NoLimit), anything else including 0 is enforced.</summary>
public sealed record AccountLimits(int MaxConnections, int MaxSubscriptions, int MaxPayload, int MaxLeafNodes)
{
    public const int NoLimit = -1;

    public static readonly AccountLimits Unlimited = new(NoLimit, NoLimit, NoLimit, NoLimit);
}
