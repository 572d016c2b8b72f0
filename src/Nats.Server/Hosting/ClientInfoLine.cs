using System.Buffers.Text;
using System.Text;
using Nats.Server.Protocol;

namespace Nats.Server.Hosting;

/// <summary>
/// The INFO line a client gets, cut once around its per-connection fields (client_id, client_ip, nonce, which Go's
/// Info puts together): a connection's line is the cached bytes before and after them with its own values copied in,
/// one array and no serializer run. A value that would need JSON escaping, or a client's own max_payload, takes the
/// full render.
/// </summary>
internal sealed class ClientInfoLine
{
    private static readonly byte[] Marker = Encoding.ASCII.GetBytes($",\"client_id\":{ulong.MaxValue}");

    private readonly byte[] _head;
    private readonly byte[] _tail;

    /// <param name="info">Without client_id, client_ip and nonce; not changed afterwards.</param>
    public ClientInfoLine(ServerInfo info)
    {
        Info = info;
        var probe = info.Clone();
        probe.ClientId = ulong.MaxValue;
        var line = probe.Render();
        var at = line.AsSpan().IndexOf(Marker);
        _head = line[..at];
        _tail = line[(at + Marker.Length)..];
    }

    public ServerInfo Info { get; }

    /// <param name="maxPayload">The client's own limit when its account lowers the server's (Go's c.mpay).</param>
    public byte[] RenderForClient(ulong clientId, string? clientIp, string? nonce = null, int? maxPayload = null)
    {
        if ((maxPayload is { } own && own != Info.MaxPayload) || !IsPlain(clientIp) || !IsPlain(nonce))
        {
            var info = Info.Clone();
            info.ClientId = clientId;
            info.ClientIp = clientIp;
            info.Nonce = nonce;
            info.MaxPayload = maxPayload ?? Info.MaxPayload;
            return info.Render();
        }
        Span<byte> digits = stackalloc byte[20];
        Utf8Formatter.TryFormat(clientId, digits, out var digitCount);
        var length = _head.Length + _tail.Length +
            (clientId != 0 ? ",\"client_id\":"u8.Length + digitCount : 0) +
            (string.IsNullOrEmpty(clientIp) ? 0 : ",\"client_ip\":\"\""u8.Length + clientIp.Length) +
            (string.IsNullOrEmpty(nonce) ? 0 : ",\"nonce\":\"\""u8.Length + nonce.Length);
        var line = new byte[length];
        var at = Copy(line, 0, _head);
        if (clientId != 0)
        {
            at = Copy(line, at, ",\"client_id\":"u8);
            at = Copy(line, at, digits[..digitCount]);
        }
        if (!string.IsNullOrEmpty(clientIp))
        {
            at = Copy(line, at, ",\"client_ip\":\""u8);
            at += Encoding.ASCII.GetBytes(clientIp, line.AsSpan(at));
            at = Copy(line, at, "\""u8);
        }
        if (!string.IsNullOrEmpty(nonce))
        {
            at = Copy(line, at, ",\"nonce\":\""u8);
            at += Encoding.ASCII.GetBytes(nonce, line.AsSpan(at));
            at = Copy(line, at, "\""u8);
        }
        Copy(line, at, _tail);
        return line;
    }

    private static int Copy(byte[] line, int at, ReadOnlySpan<byte> part)
    {
        part.CopyTo(line.AsSpan(at));
        return at + part.Length;
    }

    /// <summary>Printable ASCII that JSON writes as is.</summary>
    private static bool IsPlain(string? value)
    {
        if (value is null)
        {
            return true;
        }
        foreach (var c in value)
        {
            if (c is < ' ' or > '~' or '"' or '\\')
            {
                return false;
            }
        }
        return true;
    }
}
