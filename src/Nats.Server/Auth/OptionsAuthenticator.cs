using System.Security.Cryptography;
using System.Text;
using Nats.Server.Configuration;

namespace Nats.Server.Auth;

/// <summary>
/// Authentication from the server options, in the Go server's order (processClientOrLeafAuthentication):
/// nkey users (when the client presents an nkey), then the users list (with no_auth_user for clients
/// that present no credentials), then the single token, then the single user/password.
/// </summary>
internal sealed class OptionsAuthenticator : IClientAuthenticator
{
    private readonly Dictionary<string, UserEntry> _users = new(StringComparer.Ordinal);
    private readonly Dictionary<string, NkeyEntry> _nkeys = new(StringComparer.Ordinal);
    private readonly string? _token;
    private readonly string? _username;
    private readonly string? _password;
    private readonly string? _noAuthUser;

    private readonly string? _generatedNoAuthUser;
    private readonly bool _tlsMap;

    public OptionsAuthenticator(ServerOptions options, string? generatedNoAuthUser = null)
    {
        _generatedNoAuthUser = generatedNoAuthUser;
        _tlsMap = options.Tls?.Map == true;
        if (options.Users is not null || options.Nkeys is not null)
        {
            AuthRequired = true;
            foreach (var user in options.Users ?? [])
            {
                _users[user.Username] = new UserEntry(user, Compile(user.Permissions, user.Account is null ? options.DefaultPermissions : null));
            }
            foreach (var nkey in options.Nkeys ?? [])
            {
                _nkeys[nkey.Nkey] = new NkeyEntry(nkey, Compile(nkey.Permissions, nkey.Account is null ? options.DefaultPermissions : null));
            }
        }
        else if (!string.IsNullOrEmpty(options.Username) || !string.IsNullOrEmpty(options.AuthToken))
        {
            AuthRequired = true;
        }
        _token = options.AuthToken;
        _username = options.Username;
        _password = options.Password ?? "";
        _noAuthUser = string.IsNullOrEmpty(options.NoAuthUser) ? null : options.NoAuthUser;
    }

    public bool AuthRequired { get; }

    public bool AdvertiseAuthRequired => AuthRequired && (_noAuthUser is null || _noAuthUser == _generatedNoAuthUser);

    public bool NonceRequired => _nkeys.Count > 0;

    public AuthenticatedUser? Authenticate(in ClientAuthRequest request)
    {
        if (!AuthRequired)
        {
            return AuthenticatedUser.Anonymous;
        }
        var connect = request.Connect;
        if (_nkeys.Count > 0 && !string.IsNullOrEmpty(connect.Nkey))
        {
            if (!_nkeys.TryGetValue(connect.Nkey, out var nkey) || !ConnectionTypes.Allows(nkey.User.AllowedConnectionTypes, request.ConnectionType))
            {
                return null;
            }
            return VerifyNonceSignature(connect.Nkey, connect.Sig, request.Nonce)
                ? new AuthenticatedUser(AuthMethod.Nkey, nkey.User.Nkey, nkey.User.Account, nkey.Permissions)
                : null;
        }

        var username = connect.User;
        var password = connect.Pass;
        if (_users.Count > 0 && _tlsMap)
        {
            // verify_and_map: the certificate names the user; no password is checked.
            var mapped = request.PeerCertificate is { } cert ? MapCertificateUser(cert, request.ConnectionType) : null;
            return mapped is null ? null : new AuthenticatedUser(AuthMethod.UserPassword, mapped.User.Username, mapped.User.Account, mapped.Permissions);
        }
        if (_users.Count > 0)
        {
            if (_noAuthUser is not null && string.IsNullOrEmpty(username) && string.IsNullOrEmpty(password)
                && string.IsNullOrEmpty(connect.AuthToken) && _users.TryGetValue(_noAuthUser, out var fallback))
            {
                // Go substitutes the configured credentials and checks them like any other (so a
                // bcrypt-hashed no_auth_user never gets in: the hash is compared to itself as a password).
                username = fallback.User.Username;
                password = fallback.User.Password;
            }
            if (!string.IsNullOrEmpty(username))
            {
                if (!_users.TryGetValue(username, out var user) || !ConnectionTypes.Allows(user.User.AllowedConnectionTypes, request.ConnectionType))
                {
                    return null;
                }
                return ComparePasswords(user.User.Password, password)
                    ? new AuthenticatedUser(AuthMethod.UserPassword, user.User.Username, user.User.Account, user.Permissions)
                    : null;
            }
        }

        if (!string.IsNullOrEmpty(_token))
        {
            return ComparePasswords(_token, connect.AuthToken) ? new AuthenticatedUser(AuthMethod.Token, null, null, null) : null;
        }
        if (!string.IsNullOrEmpty(_username))
        {
            return username == _username && ComparePasswords(_password!, password)
                ? new AuthenticatedUser(AuthMethod.UserPassword, _username, null, null)
                : null;
        }
        return null;
    }

    /// <summary>Go's checkClientTLSCertSubject with the users-list lookup of processClientOrLeafAuthentication.</summary>
    private UserEntry? MapCertificateUser(System.Security.Cryptography.X509Certificates.X509Certificate2 cert, string connectionType)
    {
        var identity = Tls.CertificateIdentity.From(cert);
        UserEntry? Lookup(string name) =>
            _users.TryGetValue(name, out var user) && ConnectionTypes.Allows(user.User.AllowedConnectionTypes, connectionType) ? user : null;
        foreach (var name in identity.SanNames)
        {
            if (Lookup(name) is { } bySan)
            {
                return bySan;
            }
        }
        var allowed = _users.Values.Where(u => ConnectionTypes.Allows(u.User.AllowedConnectionTypes, connectionType)).ToList();
        if (allowed.FirstOrDefault(u => identity.MatchesDn(u.User.Username, anyOrder: false)) is { } exact)
        {
            return exact;
        }
        if (allowed.FirstOrDefault(u => identity.MatchesDn(u.User.Username, anyOrder: true)) is { } reordered)
        {
            return reordered;
        }
        if (identity.DomainComponents.Length > 0 && Lookup(identity.Subject + "," + identity.DomainComponents) is { } withDcs)
        {
            return withDcs;
        }
        return Lookup(identity.Subject);
    }

    /// <summary>Go's comparePasswords: bcrypt when the configured value looks like a bcrypt hash, else exact.</summary>
    internal static bool ComparePasswords(string serverPassword, string? clientPassword)
    {
        clientPassword ??= "";
        if (Bcrypt.IsBcryptHash(serverPassword))
        {
            return Bcrypt.Verify(clientPassword, serverPassword);
        }
        return CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(serverPassword), Encoding.UTF8.GetBytes(clientPassword));
    }

    /// <summary>The client signs the nonce text from INFO; sig is base64url without padding, or standard base64.</summary>
    internal static bool VerifyNonceSignature(string nkey, string? sig, string? nonce)
    {
        if (string.IsNullOrEmpty(sig) || !TryDecodeSignature(sig, out var signature))
        {
            return false;
        }
        return NKeys.Verify(nkey, Encoding.UTF8.GetBytes(nonce ?? ""), signature);
    }

    private static bool TryDecodeSignature(string sig, out byte[] signature)
    {
        signature = [];
        // Raw URL encoding first, as Go: no padding, '-' and '_'.
        if (!sig.Contains('=') && !sig.Contains('+') && !sig.Contains('/'))
        {
            var standard = sig.Replace('-', '+').Replace('_', '/');
            standard += (standard.Length % 4) switch { 2 => "==", 3 => "=", _ => "" };
            if (standard.Length % 4 == 0 && TryBase64(standard, out signature))
            {
                return true;
            }
        }
        return !sig.Contains('-') && !sig.Contains('_') && TryBase64(sig, out signature);
    }

    private static bool TryBase64(string text, out byte[] bytes)
    {
        bytes = new byte[text.Length * 3 / 4 + 3];
        if (Convert.TryFromBase64String(text, bytes, out var written))
        {
            bytes = bytes[..written];
            return true;
        }
        bytes = [];
        return false;
    }

    private static CompiledPermissions? Compile(Permissions? own, Permissions? defaults)
    {
        var effective = own ?? defaults;
        return effective is null ? null : new CompiledPermissions(CompiledPermissions.Normalize(effective));
    }

    private sealed record UserEntry(User User, CompiledPermissions? Permissions);

    private sealed record NkeyEntry(NkeyUser User, CompiledPermissions? Permissions);
}
