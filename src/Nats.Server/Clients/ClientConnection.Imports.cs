using System.Buffers;
using System.Buffers.Text;
using System.Text.Json;
using Nats.Server.Accounts;
using Nats.Server.Subscriptions;

namespace Nats.Server.Clients;

/// <summary>
/// Delivery across accounts (Go's processServiceImport, shadow subscriptions and response routing).
/// Only reached when a match result holds an internal subscription, so the plain publish path pays
/// one flag test. Client subscribers of a result are served first; routes run afterwards because
/// they rebuild the MSG line in the same scratch buffer.
/// </summary>
internal sealed partial class ClientConnection
{
    // Requests crossing imports back and forth stop here (Go detects the cycle on the export).
    private const int MaxImportDepth = 8;

    private static ReadOnlySpan<byte> RequestInfoHeader => "Nats-Request-Info:"u8;

    private enum RouteMode
    {
        /// <summary>A client's own publish: every route applies.</summary>
        All,

        /// <summary>Arrived through a service import or as a response: stream imports do not re-export it (Go's pmrMsgImportedFromService).</summary>
        FromService,

        /// <summary>Delivered through a stream import: only the importer's clients, no further routing.</summary>
        ClientsOnly,
    }

    private bool DeliverRouted(SubListResult result, Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message, int depth, RouteMode mode)
    {
        var line = BuildLineParts(subject, reply, headerSizeToken, sizeToken, headerSize > 0, out var prefixLength);
        var prefix = line[..prefixLength];
        var suffix = line[prefixLength..];
        var delivered = false;
        foreach (var subscription in result.Plain)
        {
            if (subscription.Route is null)
            {
                delivered |= DeliverTo(subscription, account, prefix, suffix, message, headerSize, subject, reply);
            }
        }
        delivered |= DeliverToQueueGroups(result.QueueGroups, account, prefix, suffix, message, headerSize, subject, reply);
        if (mode == RouteMode.ClientsOnly || !result.HasInternal || depth >= MaxImportDepth)
        {
            return delivered;
        }
        foreach (var subscription in result.Plain)
        {
            switch (subscription.Route)
            {
                case StreamImportRoute stream when mode == RouteMode.All:
                    delivered |= ForwardStream(stream, subject, reply, headerSize, headerSizeToken, sizeToken, message);
                    break;
                case ServiceImportRoute service:
                    delivered |= ForwardService(service, subject, reply, headerSize, message, depth);
                    break;
                case ResponseRoute response:
                    delivered |= ForwardResponse(response, subject, headerSize, headerSizeToken, sizeToken, message, depth);
                    break;
            }
        }
        return delivered;
    }

    /// <summary>A message of the exporter's subject space, shown to the importer's subscribers under the local subject.</summary>
    private bool ForwardStream(StreamImportRoute route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> headerSizeToken, ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message)
    {
        var mapped = route.Map(subject, ref _importScratch);
        var result = route.Importer.SubList.Match(mapped);
        return !result.IsEmpty && DeliverRouted(result, route.Importer, mapped, reply, headerSize, headerSizeToken, sizeToken, message, MaxImportDepth, RouteMode.ClientsOnly);
    }

    private byte[]? _importScratch;

    /// <summary>
    /// A request published in the importing account: delivered in the exporter on the exported subject,
    /// with the reply replaced by a response subject of the exporter and the requester's identity in a
    /// Nats-Request-Info header. Counts as delivered even when no responder listens, as in Go (so no 503).
    /// </summary>
    private bool ForwardService(ServiceImportRoute route, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize,
        ReadOnlySpan<byte> message, int depth)
    {
        byte[]? subjectScratch = null;
        var mapped = route.Map(subject, ref subjectScratch);
        ResponseEntry? entry = null;
        if (!reply.IsEmpty)
        {
            entry = route.Exporter.Responses.Create(route.Importer, reply, route);
        }
        var forwardedReply = entry is null ? default : entry.Subject.AsSpan();

        byte[]? rented = null;
        var forwarded = message;
        var forwardedHeaderSize = headerSize;
        if (depth == 0)
        {
            var info = RequestInfoJson(route.Importer.Name, route.Share);
            var header = headerSize > 0 ? message[..(headerSize - 2)] : "NATS/1.0\r\n"u8;
            var body = headerSize > 0 ? message[headerSize..] : message;
            rented = ArrayPool<byte>.Shared.Rent(header.Length + RequestInfoHeader.Length + info.Length + 6 + body.Length);
            var span = rented.AsSpan();
            var position = CopyHeaderWithout(header, span);
            RequestInfoHeader.CopyTo(span[position..]);
            position += RequestInfoHeader.Length;
            span[position++] = (byte)' ';
            info.CopyTo(span[position..]);
            position += info.Length;
            "\r\n\r\n"u8.CopyTo(span[position..]);
            position += 4;
            forwardedHeaderSize = position;
            body.CopyTo(span[position..]);
            position += body.Length;
            forwarded = span[..position];
        }

        Span<byte> headerSizeToken = stackalloc byte[12];
        Span<byte> sizeToken = stackalloc byte[12];
        Utf8Formatter.TryFormat(Math.Max(forwardedHeaderSize, 0), headerSizeToken, out var headerSizeLength);
        Utf8Formatter.TryFormat(forwarded.Length - 2, sizeToken, out var sizeLength);

        var result = route.Exporter.SubList.Match(mapped);
        var delivered = !result.IsEmpty && DeliverRouted(result, route.Exporter, mapped, forwardedReply, forwardedHeaderSize,
            headerSizeToken[..headerSizeLength], sizeToken[..sizeLength], forwarded, depth + 1, RouteMode.FromService);
        if (!delivered && entry is not null)
        {
            route.Exporter.Responses.Remove(entry);
        }
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
        return true;
    }

    /// <summary>A responder answered on an <c>_R_</c> subject: back to the requester's reply subject in its own account.</summary>
    private bool ForwardResponse(ResponseRoute route, ReadOnlySpan<byte> subject, int headerSize, ReadOnlySpan<byte> headerSizeToken,
        ReadOnlySpan<byte> sizeToken, ReadOnlySpan<byte> message, int depth)
    {
        var responses = route.Responses;
        var entry = responses.Find(subject);
        if (entry is null)
        {
            return false;
        }
        // An empty message ends a streamed or chunked response, as in Go.
        var singleton = entry.Import.ResponseType == ServiceResponseType.Singleton || message.Length == 2;
        if (singleton && !responses.Remove(entry))
        {
            // Another response won the race for a one-shot mapping.
            return false;
        }
        var result = entry.Requester.SubList.Match(entry.Reply);
        var delivered = !result.IsEmpty && DeliverRouted(result, entry.Requester, entry.Reply, default, headerSize, headerSizeToken, sizeToken, message,
            depth + 1, RouteMode.FromService);
        if (!delivered)
        {
            responses.Remove(entry);
        }
        else if (!singleton)
        {
            Volatile.Write(ref entry.Touched, System.Diagnostics.Stopwatch.GetTimestamp());
        }
        return delivered;
    }

    /// <summary>Copies a header block (status line and fields, without the closing blank line) minus any client-supplied request info.</summary>
    private static int CopyHeaderWithout(ReadOnlySpan<byte> header, Span<byte> destination)
    {
        var position = 0;
        var rest = header;
        while (!rest.IsEmpty)
        {
            var end = rest.IndexOf("\r\n"u8);
            var lineLength = end < 0 ? rest.Length : end + 2;
            var line = rest[..lineLength];
            if (!line.StartsWith(RequestInfoHeader))
            {
                line.CopyTo(destination[position..]);
                position += line.Length;
            }
            rest = rest[lineLength..];
        }
        return position;
    }

    /// <summary>Go's ClientInfo for a service request: account and RTT, plus the client's details when the import shares them.</summary>
    private byte[] RequestInfoJson(string account, bool share)
    {
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            if (share)
            {
                json.WriteString("start", StartTime);
                json.WriteString("host", RemoteIp);
                json.WriteNumber("id", Id);
            }
            json.WriteString("acc", account);
            if (share)
            {
                WriteIfPresent(json, "user", _connect.User ?? AuthUser?.Name);
                WriteIfPresent(json, "name", _connect.Name);
                WriteIfPresent(json, "lang", _connect.Lang);
                WriteIfPresent(json, "ver", _connect.Version);
            }
            var rttNanos = Rtt.Ticks * 100;
            if (rttNanos > 0)
            {
                json.WriteNumber("rtt", rttNanos);
            }
            if (share)
            {
                json.WriteString("server", _server.ServerName);
                json.WriteString("kind", "Client");
                json.WriteString("client_type", "nats");
            }
            json.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    private static void WriteIfPresent(Utf8JsonWriter json, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            json.WriteString(name, value);
        }
    }
}
