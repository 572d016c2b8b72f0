using System.Text;
using BenchmarkDotNet.Attributes;
using Nats.Server.Auth;

namespace Nats.Benchmarks.Auth;

/// <summary>
/// Per-message permission costs (cached publish check, delivery check without a deny filter) and the
/// per-connection costs of an nkey signature check and a bcrypt comparison.
/// </summary>
[MemoryDiagnoser]
public class AuthBenchmarks
{
    private ClientPermissions _publish = null!;
    private ClientPermissions _delivery = null!;
    private byte[][] _subjects = [];
    private byte[][] _manySubjects = [];
    private string _key = "";
    private byte[] _signature = [];
    private readonly byte[] _nonce = "0123456789abcde"u8.ToArray();
    private string _hash = "";
    private int _next;

    [GlobalSetup]
    public void Setup()
    {
        var permissions = new Permissions
        {
            Publish = new SubjectPermission { Allow = ["orders.>", "events.*.created", "metrics.>"], Deny = ["orders.secret.>"] },
        };
        _publish = new ClientPermissions(new CompiledPermissions(CompiledPermissions.Normalize(permissions)));
        _delivery = new ClientPermissions(new CompiledPermissions(new Permissions { Subscribe = new SubjectPermission { Deny = ["admin.>"] } }));
        _manySubjects = Enumerable.Range(0, 4096).Select(i => Encoding.ASCII.GetBytes($"orders.region{i % 8}.item{i}")).ToArray();
        _subjects = Enumerable.Range(0, 64).Select(i => Encoding.ASCII.GetBytes($"orders.region{i % 8}.item{i}")).ToArray();
        using var pair = NATS.NKeys.KeyPair.CreatePair(NATS.NKeys.PrefixByte.User);
        _key = pair.GetPublicKey();
        _signature = new byte[64];
        pair.Sign(_nonce, _signature);
        _hash = BCrypt.Net.BCrypt.HashPassword("s3cret", 10);
    }

    [Benchmark]
    public bool PublishCheckCached() => _publish.CanPublish(_subjects[_next++ & 63]);

    /// <summary>Distinct subjects beyond the 128-entry cache: every call is a miss (match, insert, prune).</summary>
    [Benchmark]
    public bool PublishCheckCacheMiss() => _publish.CanPublish(_manySubjects[_next++ & 4095]);

    [Benchmark]
    public bool DeliveryCheckNoFilter() => _delivery.AllowDelivery("orders.x"u8, default);

    /// <summary>What a login costs: decode the public nkey, then verify the nonce signature.</summary>
    [Benchmark]
    public bool NkeySignatureVerify() => NKeys.Verify(_key, _nonce, _signature);

    [Benchmark]
    public bool BcryptCost10Verify() => Bcrypt.Verify("s3cret", _hash);
}
