using System.Net.Security;
using System.Security.Authentication;
using System.Text.RegularExpressions;
using Nats.Server.Configuration;

namespace Nats.Server.Tls;

/// <summary>
/// Go's parseTLS: reads a <c>tls {}</c> map into <see cref="TlsOptions"/> with the Go server's error
/// texts ("file:line:col: error parsing tls config, ..."). min_version and handshake_first are the
/// Go 2.10 keys (2.9.10 refuses them); they are accepted because current clients and configurations use them.
/// </summary>
internal static partial class TlsConfigBinder
{
    /// <summary>Go's curvePreferenceMap names.</summary>
    internal static readonly string[] GoCurves = ["X25519", "CurveP256", "CurveP384", "CurveP521"];

    /// <summary>Returns the options, or null after adding the first error to <paramref name="errors"/> (Go stops at the first).</summary>
    public static TlsOptions? Bind(ConfigValue block, List<string> errors)
    {
        try
        {
            return Parse(block);
        }
        catch (ConfigBindException e)
        {
            errors.Add(e.Message);
            return null;
        }
    }

    /// <summary>Go's parseTLS then GenTLSConfig in one: the loaded block, or null after adding the error (a file's at the block).</summary>
    public static TlsServerContext? BindContext(ConfigValue block, List<string> errors)
    {
        if (Bind(block, errors) is not { } tls)
        {
            return null;
        }
        try
        {
            return TlsServerContext.Create(tls);
        }
        catch (InvalidOperationException e)
        {
            errors.Add($"{block.Source}: {e.Message}");
            return null;
        }
    }

    /// <summary>As <see cref="BindContext"/> for a block only used to dial (a leaf remote's): no certificate needed.</summary>
    public static TlsServerContext? BindClientContext(ConfigValue block, List<string> errors)
    {
        if (Bind(block, errors) is not { } tls)
        {
            return null;
        }
        try
        {
            return TlsServerContext.CreateClient(tls);
        }
        catch (InvalidOperationException e)
        {
            errors.Add($"{block.Source}: {e.Message}");
            return null;
        }
    }

    private static TlsOptions Parse(ConfigValue block)
    {
        var map = block.Map();
        var tls = new TlsOptions();
        foreach (var (key, v) in map)
        {
            switch (key.ToLowerInvariant())
            {
                case "cert_file":
                    tls.CertFile = v.Value as string ?? throw Error(v, "error parsing tls config, expected 'cert_file' to be filename");
                    break;
                case "key_file":
                    tls.KeyFile = v.Value as string ?? throw Error(v, "error parsing tls config, expected 'key_file' to be filename");
                    break;
                case "ca_file":
                    tls.CaFile = v.Value as string ?? throw Error(v, "error parsing tls config, expected 'ca_file' to be filename");
                    break;
                case "insecure":
                    tls.Insecure = v.Value is bool insecure ? insecure : throw Error(v, "error parsing tls config, expected 'insecure' to be a boolean");
                    break;
                case "verify":
                    tls.Verify = v.Value is bool verify ? verify : throw Error(v, "error parsing tls config, expected 'verify' to be a boolean");
                    break;
                case "verify_and_map":
                    var map2 = v.Value is bool m ? m : throw Error(v, "error parsing tls config, expected 'verify_and_map' to be a boolean");
                    if (map2)
                    {
                        tls.Verify = true;
                    }
                    tls.Map = map2;
                    break;
                case "verify_cert_and_check_known_urls":
                    var known = v.Value is bool k ? k : throw Error(v, "error parsing tls config, expected 'verify_cert_and_check_known_urls' to be a boolean");
                    if (known)
                    {
                        // Go's answer for the client port (isClientCtx).
                        throw Error(v, "verify_cert_and_check_known_urls not supported in this context");
                    }
                    break;
                case "cipher_suites":
                    var suites = v.List();
                    if (suites.Count == 0)
                    {
                        throw Error(v, "error parsing tls config, 'cipher_suites' cannot be empty");
                    }
                    tls.CipherSuites = suites.Select(ParseCipher).ToList();
                    break;
                case "curve_preferences":
                    var curves = v.List();
                    if (curves.Count == 0)
                    {
                        throw Error(v, "error parsing tls config, 'curve_preferences' cannot be empty");
                    }
                    tls.CurvePreferences = curves.Select(ParseCurve).ToList();
                    break;
                case "timeout":
                    tls.Timeout = v.Value switch
                    {
                        long l => l,
                        double d => d,
                        string s => GoDuration.TryParse(s, out var duration, out var error)
                            ? duration.TotalSeconds
                            : throw Error(v, $"error parsing tls config, 'timeout' {error}"),
                        _ => throw Error(v, "error parsing tls config, 'timeout' wrong type"),
                    };
                    break;
                case "connection_rate_limit":
                    tls.RateLimit = v.Value is long rate ? rate : throw Error(v, "error parsing tls config, 'connection_rate_limit' wrong type");
                    break;
                case "pinned_certs":
                    var pins = v.AsList ?? throw Error(v, "error parsing tls config, expected 'pinned_certs' to be a list of hex-encoded sha256 of DER encoded SubjectPublicKeyInfo");
                    if (pins.Count > 0)
                    {
                        tls.PinnedCerts = new HashSet<string>(StringComparer.Ordinal);
                        foreach (var pin in pins)
                        {
                            var entry = (pin.Value as string ?? "").ToLowerInvariant();
                            if (!PinPattern().IsMatch(entry))
                            {
                                throw Error(pin, $"error parsing tls config, 'pinned_certs' key {entry} does not look like hex-encoded sha256 of DER encoded SubjectPublicKeyInfo");
                            }
                            tls.PinnedCerts.Add(entry);
                        }
                    }
                    break;
                case "min_version":
                    tls.MinVersion = ParseMinVersion(v);
                    break;
                case "handshake_first":
                case "first":
                case "immediate":
                    ParseHandshakeFirst(key, v, tls);
                    break;
                default:
                    throw Error(v, $"error parsing tls config, unknown field [{GoConfigText.Quote(key)}]");
            }
        }
        return tls;
    }

    private static void ParseHandshakeFirst(string key, ConfigValue v, TlsOptions tls)
    {
        switch (v.Value)
        {
            case bool b:
                tls.HandshakeFirst = b;
                break;
            case string s:
                switch (s.ToLowerInvariant())
                {
                    case "true" or "on":
                        tls.HandshakeFirst = true;
                        break;
                    case "false" or "off":
                        tls.HandshakeFirst = false;
                        break;
                    case "auto" or "auto_fallback":
                        tls.HandshakeFirst = true;
                        tls.HandshakeFirstFallback = TimeSpan.FromMilliseconds(50);
                        break;
                    default:
                        if (!GoDuration.TryParse(s, out var delay, out _))
                        {
                            throw Error(v, $"field \"{key}\"'s value \"{s}\" is invalid");
                        }
                        tls.HandshakeFirst = true;
                        tls.HandshakeFirstFallback = delay;
                        break;
                }
                break;
            default:
                throw Error(v, $"field \"{key}\" should be a boolean or a string, got {v.GoTypeName}");
        }
    }

    private static SslProtocols ParseMinVersion(ConfigValue v)
    {
        if (v.Value is not string text)
        {
            throw Error(v, $"error parsing tls config: 'min_version' wrong type: {v.Value}");
        }
        return text switch
        {
            "1.2" => SslProtocols.Tls12,
            "1.3" => SslProtocols.Tls13,
            "1.0" => throw Error(v, "error parsing tls config: unsupported TLS version: TLS 1.0"),
            "1.1" => throw Error(v, "error parsing tls config: unsupported TLS version: TLS 1.1"),
            _ => throw Error(v, $"error parsing tls config: unknown version: {text}"),
        };
    }

    private static TlsCipherSuite ParseCipher(ConfigValue v)
    {
        var name = v.Value as string ?? "";
        if (!TlsNames.TryParseCipher(name, out var suite))
        {
            throw Error(v, $"unrecognized cipher {name}");
        }
        return suite;
    }

    private static string ParseCurve(ConfigValue v)
    {
        var name = v.Value as string ?? "";
        return GoCurves.Contains(name, StringComparer.Ordinal) ? name : throw Error(v, $"unrecognized curve preference {name}");
    }

    private static ConfigBindException Error(ConfigValue at, string message) => new(at, message);

    [GeneratedRegex("^[a-f0-9]{64}$")]
    private static partial Regex PinPattern();
}
