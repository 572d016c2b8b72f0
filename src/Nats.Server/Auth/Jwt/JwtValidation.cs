namespace Nats.Server.Auth.Jwt;

/// <summary>
/// Go's jwt.ValidationResults: problems found in a decoded claim, each either blocking (an error, or a
/// time check when times are enforced) or a warning.
/// </summary>
internal sealed class JwtValidation
{
    private readonly List<(string Description, bool Blocking, bool TimeCheck)> _issues = [];

    public IReadOnlyList<(string Description, bool Blocking, bool TimeCheck)> Issues => _issues;

    public void AddError(string description) => _issues.Add((description, true, false));

    public void AddWarning(string description) => _issues.Add((description, false, false));

    public void AddTimeCheck(string description) => _issues.Add((description, false, true));

    /// <summary>Go's IsBlocking(includeTimeChecks).</summary>
    public bool IsBlocking(bool includeTimeChecks) => _issues.Any(i => i.Blocking || (includeTimeChecks && i.TimeCheck));

    public IEnumerable<string> Errors => _issues.Where(i => i.Blocking).Select(i => i.Description);

    public static long Now => DateTimeOffset.UtcNow.ToUnixTimeSeconds();
}
