using Nats.Server.Tests.Configuration;
using NATS.NKeys;

namespace Nats.Server.Tests.Auth.Jwt;

/// <summary>
/// Operator-mode configuration errors: Go's "nats-server -t -c file" and ours must agree on acceptance
/// and on the first error line, position included. The operator and accounts are generated per run.
/// </summary>
public sealed class OperatorConfigDifferentialTests
{
    private static readonly KeyPair Op = JwtMinter.NewKey(PrefixByte.Operator);
    private static readonly KeyPair Sys = JwtMinter.NewKey(PrefixByte.Account);
    private static readonly string OperatorJwt = JwtMinter.Operator(Op, n => n["system_account"] = Sys.GetPublicKey());
    private static readonly string BareOperatorJwt = JwtMinter.Operator(Op);
    private static readonly string SysJwt = JwtMinter.Account(Op, Sys.GetPublicKey());

    public static TheoryData<string, string> Cases() => new()
    {
        { "valid-memory", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\nresolver_preload: {{ {Sys.GetPublicKey()}: \"{SysJwt}\" }}\n" },
        { "valid-full", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: full, dir: \"@DIR@/jwt\" }}\n" },
        { "valid-cache", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: cache, dir: \"@DIR@/jwt\" }}\n" },
        { "operator-list", $"operator: [\"{OperatorJwt}\"]\nresolver: MEMORY\n" },
        { "operator-missing-file", "operator: \"@DIR@/missing.jwt\"\nresolver: MEMORY\n" },
        { "operator-not-a-jwt", "operator: \"eyJhbGciOiJub3RoaW5nIn0.e30.AA\"\nresolver: MEMORY\n" },
        { "operator-account-jwt", $"operator: \"{SysJwt}\"\nresolver: MEMORY\n" },
        { "resolver-type", $"operator: \"{OperatorJwt}\"\nresolver: 5\n" },
        { "resolver-word", $"operator: \"{OperatorJwt}\"\nresolver: FOO\n" },
        { "resolver-no-dir", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: full }}\n" },
        { "resolver-bad-type", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: bogus, dir: \"@DIR@/jwt\" }}\n" },
        { "resolver-full-ttl", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: full, dir: \"@DIR@/jwt\", ttl: \"1m\" }}\n" },
        { "resolver-cache-delete", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: cache, dir: \"@DIR@/jwt\", allow_delete: true }}\n" },
        { "resolver-bad-interval", $"operator: \"{OperatorJwt}\"\nresolver: {{ type: full, dir: \"@DIR@/jwt\", interval: \"2x\" }}\n" },
        { "preload-not-map", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\nresolver_preload: 5\n" },
        { "preload-not-string", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\nresolver_preload: {{ A: 5 }}\n" },
        { "preload-bad-jwt", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\nresolver_preload: {{ A: \"nope\" }}\n" },
        { "trusted-bad-key", "trusted: \"nope\"\n" },
        { "trusted-list-element", "trusted: [\"nope\", true]\n" },
        { "no-resolver", $"operator: \"{OperatorJwt}\"\n" },
        { "with-accounts", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\naccounts {{ A {{ }} }}\n" },
        { "with-users", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\nauthorization {{ users: [ {{ user: a, password: b }} ] }}\n" },
        { "system-account-mismatch", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\nsystem_account: {JwtMinter.NewKey(PrefixByte.Account).GetPublicKey()}\n" },
        { "full-without-system-account", $"operator: \"{BareOperatorJwt}\"\nresolver: {{ type: full, dir: \"@DIR@/jwt\" }}\n" },
        { "operator-and-trusted", $"operator: \"{OperatorJwt}\"\nresolver: MEMORY\ntrusted: \"{Op.GetPublicKey()}\"\n" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task ErrorsAndPositionsMatchGoServer(string name, string text)
    {
        using var goDir = new TempDirectory();
        using var ourDir = new TempDirectory();
        var goFile = goDir.Write(name + ".conf", text.Replace("@DIR@", goDir.Path, StringComparison.Ordinal));
        var ourFile = ourDir.Write(name + ".conf", text.Replace("@DIR@", ourDir.Path, StringComparison.Ordinal));
        var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(goFile);
        var ours = GoConfigCheck.OurRefusal(ourFile);
        Assert.True(goAccepts == (ours is null), $"{name}: Go accepts={goAccepts} ({goOutput}), ours: {ours ?? "valid"}");
        if (!goAccepts)
        {
            var goFirst = goOutput.Trim().Split('\n')[0].Replace("nats-server: ", "", StringComparison.Ordinal).Replace(goDir.Path, "@DIR@", StringComparison.Ordinal);
            Assert.Equal(goFirst, ours!.Split('\n')[0].Replace(ourDir.Path, "@DIR@", StringComparison.Ordinal));
        }
    }
}
