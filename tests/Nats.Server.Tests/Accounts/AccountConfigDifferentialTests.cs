using Nats.Server.Configuration;
using Nats.Server.Tests.Configuration;

namespace Nats.Server.Tests.Accounts;

/// <summary>
/// The accounts block checked against Go's "-t -c file": the same files accepted or refused, and a
/// refusal carries Go's reason (the text after "file:line:col: ", positions aside).
/// </summary>
public class AccountConfigDifferentialTests
{
    public static TheoryData<string, string> Cases() => new()
    {
        { "map", "accounts { A { users: [{user: a, password: x}] }, B { users: [{user: b, password: y}] } }\n" },
        { "list", "accounts [A, B]\n" },
        { "reserved", "accounts { $G { } }\n" },
        { "duplicate-user-across-accounts", "accounts { A { users: [{user: a, password: x}] }, B { users: [{user: a, password: y}] } }\n" },
        { "duplicate-user-with-authorization", "authorization { users: [{user: a, password: x}] }\naccounts { A { users: [{user: a, password: y}] } }\n" },
        { "token-and-accounts", "authorization { token: abc }\naccounts { A { users: [{user: a, password: x}] } }\n" },
        { "single-user-and-accounts", "authorization { user: u, password: p }\naccounts { A { users: [{user: a, password: x}] } }\n" },
        { "duplicate-list-entry", "accounts [A, B, A]\n" },
        { "limits", "accounts { A { limits { max_connections: 2, max_subscriptions: 5, max_payload: 100, max_leafnodes: 1 } } }\n" },
        { "limits-unknown", "accounts { A { limits { max_foo: 1 } } }\n" },
        { "unknown-field", "accounts { A { bogus: 1 } }\n" },
        { "bad-account-nkey", "accounts { A { nkey: \"bad\" } }\n" },
        { "not-a-map", "accounts { A: 5 }\n" },
        { "default-permissions", "accounts { A { users: [{user: a, password: x}], default_permissions: { publish: \"a.>\" } } }\n" },
        { "system-account", "system_account: SYS\naccounts { SYS { users: [{user: s, password: x}] } }\n" },
        { "no-system-account", "no_system_account: true\n" },
        { "no-auth-user-in-account", "accounts { A { users: [{user: a, password: x}] } }\nno_auth_user: a\n" },
        { "no-auth-user-missing", "accounts { A { users: [{user: a, password: x}] } }\nno_auth_user: z\n" },
    };

    // Go walks the top-level keys in random map order, so which of two conflicting blocks reports the
    // conflict (and in which words) varies from run to run; only the refusal itself is stable.
    private static readonly HashSet<string> OrderDependent = ["token-and-accounts", "single-user-and-accounts", "duplicate-user-with-authorization"];

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task AcceptanceAndReasonMatchGoServer(string name, string text)
    {
        using var dir = new TempDirectory();
        var file = dir.Write(name + ".conf", text);

        var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(file);
        var ourMessage = GoConfigCheck.OurRefusal(file);
        Assert.True(goAccepts == (ourMessage is null), $"{name}: Go accepts={goAccepts} ({goOutput}), ours: {ourMessage ?? "valid"}");
        if (!goAccepts && !OrderDependent.Contains(name))
        {
            Assert.Contains(GoConfigCheck.Reason(goOutput), ourMessage);
        }
    }


}
