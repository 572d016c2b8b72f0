using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Nats.Server.Clients;
using Nats.Server.Monitoring;
using Nats.Server.Subscriptions;
using Nats.Subjects;

namespace Nats.Server.Accounts.SystemEvents;

/// <summary>
/// The $SYS request services of Go's initEventTracking, subscribed in Go's order so sids and
/// /subsz numbers line up: server pings and direct requests for the monitoring documents, and the
/// account-scoped ones. Replies are Go's ServerAPIResponse: {"server":{...},"data":...,"error":...}.
/// </summary>
internal sealed partial class SystemAccountService
{
    private delegate void RequestWork(string subject, string reply, byte[] body);

    private static readonly Dictionary<string, OptionKind> NoFields = [];

    private static readonly Dictionary<string, OptionKind> ConnzFields = new()
    {
        ["sort"] = OptionKind.String,
        ["auth"] = OptionKind.Bool,
        ["subscriptions"] = OptionKind.Bool,
        ["subscriptions_detail"] = OptionKind.Bool,
        ["offset"] = OptionKind.Int,
        ["limit"] = OptionKind.Int,
        ["cid"] = OptionKind.UInt,
        ["state"] = OptionKind.Int,
        ["user"] = OptionKind.String,
        ["acc"] = OptionKind.String,
        ["mqtt_client"] = OptionKind.String,
    };

    private static readonly Dictionary<string, OptionKind> SubszFields = new()
    {
        ["offset"] = OptionKind.Int,
        ["limit"] = OptionKind.Int,
        ["subscriptions"] = OptionKind.Bool,
        ["account"] = OptionKind.String,
        ["test"] = OptionKind.String,
    };

    private static readonly Dictionary<string, OptionKind> RoutezFields = new()
    {
        ["subscriptions"] = OptionKind.Bool,
        ["subscriptions_detail"] = OptionKind.Bool,
    };

    private static readonly Dictionary<string, OptionKind> GatewayzFields = new()
    {
        ["name"] = OptionKind.String,
        ["accounts"] = OptionKind.Bool,
        ["account_name"] = OptionKind.String,
    };

    private static readonly Dictionary<string, OptionKind> LeafzFields = new()
    {
        ["subscriptions"] = OptionKind.Bool,
        ["account"] = OptionKind.String,
    };

    private static readonly Dictionary<string, OptionKind> AccountzFields = new() { ["account"] = OptionKind.String };

    private static readonly Dictionary<string, OptionKind> AccountStatzFields = new()
    {
        ["accounts"] = OptionKind.StringArray,
        ["include_unused"] = OptionKind.Bool,
    };

    private static readonly Dictionary<string, OptionKind> JszFields = new()
    {
        ["account"] = OptionKind.String,
        ["accounts"] = OptionKind.Bool,
        ["streams"] = OptionKind.Bool,
        ["consumer"] = OptionKind.Bool,
        ["config"] = OptionKind.Bool,
        ["leader_only"] = OptionKind.Bool,
        ["offset"] = OptionKind.Int,
        ["limit"] = OptionKind.Int,
    };

    private static readonly Dictionary<string, OptionKind> HealthzFields = new()
    {
        ["js-enabled-only"] = OptionKind.Bool,
        ["js-server-only"] = OptionKind.Bool,
    };

    private void SubscribeAll()
    {
        var id = _server.ServerId;
        Subscribe($"$SYS._INBOX.{ServerHash}.*", Queue((subject, _, body) => ImportReply(subject, body)));
        var remote = _remote!;
        // Account counts change before the event reaches anyone else (Go runs this handler in the route's read loop).
        InternalMessageHandler conns = (_, _, _, _, _, body) =>
        {
            if (Running)
            {
                remote.OnAccountConns(body);
            }
            return true;
        };
        Subscribe("$SYS.SERVER.ACCOUNT.*.CONNS", conns);
        Subscribe($"$SYS._INBOX_.{id}", conns);
        Subscribe("$SYS.REQ.ACCOUNT.NSUBS", Queue(NumSubscriptionsRequest));
        Subscribe("$SYS.SERVER.*.STATSZ", Queue((_, _, body) => remote.OnStatsz(body)));
        Subscribe("$SYS.SERVER.*.SHUTDOWN", Queue((subject, _, body) => remote.OnShutdown(subject, body)));
        if (!SubscribeClaims())
        {
            Subscribe("$SYS.ACCOUNT.*.CLAIMS.UPDATE", Ignore);
            Subscribe("$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", Ignore);
        }
        Subscribe("$SYS.REQ.SERVER.PING", Queue(StatszRequest));
        foreach (var (name, work) in ServerServices())
        {
            var handler = Queue(work);
            Subscribe($"$SYS.REQ.SERVER.{id}.{name}", handler);
            Subscribe($"$SYS.REQ.SERVER.PING.{name}", handler);
        }
        foreach (var (name, work) in AccountServices())
        {
            Subscribe($"$SYS.REQ.ACCOUNT.*.{name}", Queue(work));
        }
        Subscribe("$SYS.REQ.ACCOUNT.PING.STATZ", Queue((_, reply, body) =>
            ZRequest(reply, body, "AccountStatzEventOptions", AccountStatzFields, o => AccountStatz(o, o.Strings("accounts")))));
        Subscribe("$SYS.ACCOUNT.*.LEAFNODE.CONNECT", Ignore);
        Subscribe($"$SYS.LATENCY.M2.{ServerHash}", Ignore);
        Subscribe("$SYS.DEBUG.SUBSCRIBERS", DebugSubscribersHandler());
    }

    private IEnumerable<(string Name, RequestWork Work)> ServerServices()
    {
        yield return ("STATSZ", StatszRequest);
        yield return ("VARZ", (_, reply, body) => ZRequest(reply, body, "VarzEventOptions", NoFields,
            _ => Data(_documents.Varz(), MonitorJsonContext.Compact.Varz)));
        yield return ("SUBSZ", (_, reply, body) => ZRequest(reply, body, "SubszEventOptions", SubszFields,
            o => Subsz(o, o.Bool("subscriptions"), o.String("account"))));
        yield return ("CONNZ", (_, reply, body) => ZRequest(reply, body, "ConnzEventOptions", ConnzFields,
            o => Connz(o, o.String("acc"))));
        yield return ("ROUTEZ", (_, reply, body) => ZRequest(reply, body, "RoutezEventOptions", RoutezFields,
            _ => Data(_documents.Routez(), MonitorJsonContext.Compact.Routez)));
        yield return ("GATEWAYZ", (_, reply, body) => ZRequest(reply, body, "GatewayzEventOptions", GatewayzFields,
            _ => Data(_documents.Gatewayz(), MonitorJsonContext.Compact.Gatewayz)));
        yield return ("LEAFZ", (_, reply, body) => ZRequest(reply, body, "LeafzEventOptions", LeafzFields,
            _ => Data(_documents.Leafz(), MonitorJsonContext.Compact.Leafz)));
        yield return ("ACCOUNTZ", (_, reply, body) => ZRequest(reply, body, "AccountzEventOptions", AccountzFields,
            o => _documents.Accountz(o.String("account"), out var error) is { } doc
                ? Data(doc, MonitorJsonContext.Compact.Accountz)
                : ZResult.Failed(error)));
        yield return ("JSZ", (_, reply, body) => ZRequest(reply, body, "JszEventOptions", JszFields,
            o => _documents.Jsz(o.Bool("leader_only"), out var error) is { } doc
                ? Data(doc, MonitorJsonContext.Compact.Jsz)
                : error.StartsWith("filtered", StringComparison.Ordinal) ? ZResult.Skipped : ZResult.Failed(error)));
        yield return ("HEALTHZ", (_, reply, body) => ZRequest(reply, body, "HealthzEventOptions", HealthzFields,
            _ => Data(_documents.Healthz(), MonitorJsonContext.Compact.HealthStatus)));
    }

    private IEnumerable<(string Name, RequestWork Work)> AccountServices()
    {
        yield return ("SUBSZ", (subject, reply, body) => ZRequest(reply, body, "SubszEventOptions", SubszFields,
            o => AccountOf(subject) is { } account ? Subsz(o, true, account) : Malformed(subject)));
        yield return ("CONNZ", (subject, reply, body) => ZRequest(reply, body, "ConnzEventOptions", ConnzFields,
            o => AccountOf(subject) is { } account ? Connz(o, account) : Malformed(subject)));
        yield return ("LEAFZ", (subject, reply, body) => ZRequest(reply, body, "LeafzEventOptions", LeafzFields,
            _ => AccountOf(subject) is not null ? Data(_documents.Leafz(), MonitorJsonContext.Compact.Leafz) : Malformed(subject)));
        yield return ("JSZ", (subject, reply, body) => ZRequest(reply, body, "JszEventOptions", JszFields,
            o => AccountOf(subject) is { } account ? JszAccount(account, o) : Malformed(subject)));
        yield return ("INFO", (subject, reply, body) => ZRequest(reply, body, "AccInfoEventOptions", NoFields,
            _ => AccountOf(subject) is not { } account ? Malformed(subject)
                : _documents.Accountz(account, out var error)?.AccountDetail is { } info
                    ? Data(info, MonitorJsonContext.Compact.AccountInfo)
                    : ZResult.Failed(error)));
        yield return ("STATZ", (subject, reply, body) => ZRequest(reply, body, "AccountStatzEventOptions", AccountStatzFields,
            o => AccountOf(subject) is not { } account ? Malformed(subject)
                : account == "PING" ? ZResult.Skipped
                : AccountStatz(o, [account])));
        yield return ("CONNS", ConnsRequest);
    }

    private void Subscribe(string subject, InternalMessageHandler handler) =>
        InternalClient.Subscribe(_client!, subject, (++_sid).ToString(CultureInfo.InvariantCulture), handler);

    private static bool Ignore(Subscription subscription, Delivery.MessageOrigin publisher, ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> body) => true;

    /// <summary>Copies the request off the publisher's buffer and answers it on the loop.</summary>
    private InternalMessageHandler Queue(RequestWork work) => (_, _, subject, reply, _, body) =>
    {
        var subjectText = Encoding.UTF8.GetString(subject);
        var replyText = Encoding.UTF8.GetString(reply);
        var bodyCopy = body.ToArray();
        Post(() => work(subjectText, replyText, bodyCopy));
        return true;
    };

    /// <summary>Go's statszReq: answers on the reply (or publishes the periodic subject when there is none).</summary>
    private void StatszRequest(string subject, string reply, byte[] body)
    {
        if (reply.Length == 0)
        {
            reply = $"$SYS.SERVER.{_server.ServerId}.STATSZ";
        }
        if (body.Length > 0)
        {
            if (!RequestOptions.TryParse(body, "StatszEventOptions", NoFields, out var options, out var error))
            {
                WriteResponse(reply, null, 400, error);
                return;
            }
            if (IsFiltered(options))
            {
                return;
            }
        }
        PublishStatsz(reply);
    }

    /// <summary>Go's zReq: decode the options, apply the server filter, build the document, reply.</summary>
    private void ZRequest(string reply, byte[] body, string structName, IReadOnlyDictionary<string, OptionKind> fields,
        Func<RequestOptions, ZResult> respond, Account? replyAccount = null)
    {
        if (reply.Length == 0)
        {
            return;
        }
        var options = RequestOptions.Empty;
        if (body.Length > 0)
        {
            if (!RequestOptions.TryParse(body, structName, fields, out options, out var error))
            {
                WriteResponse(reply, null, 400, error, replyAccount);
                return;
            }
            if (IsFiltered(options))
            {
                return;
            }
        }
        var result = respond(options);
        if (result.Skip)
        {
            return;
        }
        WriteResponse(reply, result.Write ?? (json => json.WriteNullValue()), result.Error is null ? 0 : 500, result.Error, replyAccount);
    }

    private void WriteResponse(string reply, Action<Utf8JsonWriter>? data, int code, string? error, Account? replyAccount = null) =>
        Publish(reply, "", json =>
        {
            json.WriteStartObject();
            WriteServerInfo(json);
            if (data is not null)
            {
                json.WritePropertyName("data");
                data(json);
            }
            if (error is not null)
            {
                json.WriteStartObject("error");
                json.WriteNumber("code", code);
                json.WriteString("description", error);
                json.WriteEndObject();
            }
            json.WriteEndObject();
        }, replyAccount);

    /// <summary>Go's filterRequest: substring matches on name, host and cluster name; no tags or domain here, so those always filter.</summary>
    private bool IsFiltered(RequestOptions options)
    {
        var name = options.String("server_name");
        var host = options.String("host");
        var cluster = options.String("cluster");
        return (name.Length > 0 && !_server.ServerName.Contains(name, StringComparison.Ordinal))
            || (host.Length > 0 && !_server.Options.Host.Contains(host, StringComparison.Ordinal))
            || (cluster.Length > 0 && !(ClusterName ?? "").Contains(cluster, StringComparison.Ordinal))
            || options.Strings("tags").Length > 0
            || options.String("domain").Length > 0;
    }

    private ZResult Subsz(RequestOptions options, bool subscriptions, string account)
    {
        var document = _documents.SubszDocument(subscriptions, options.Int("offset"), options.Int("limit"),
            options.String("test"), account, out var error);
        return document is null ? ZResult.Failed(error) : Data(document, MonitorJsonContext.Compact.Subsz);
    }

    private ZResult Connz(RequestOptions options, string account)
    {
        var state = options.Int("state") switch
        {
            1 => ConnState.Closed,
            2 => ConnState.Any,
            _ => ConnState.Open,
        };
        var connzOptions = new ConnzOptions(options.String("sort"), options.Bool("auth"), options.Bool("subscriptions"),
            options.Bool("subscriptions_detail"), options.Int("offset"), options.Int("limit"), options.UInt("cid"), state,
            options.String("user"), account);
        return ConnzBuilder.Build(_server, connzOptions, out var error) is { } connz
            ? Data(connz, MonitorJsonContext.Compact.Connz)
            : ZResult.Failed(error);
    }

    /// <summary>Go's AccountStatz: the named accounts (all when none), skipped entirely when nothing is left and unused ones are not wanted.</summary>
    private ZResult AccountStatz(RequestOptions options, string[] accounts)
    {
        var includeUnused = options.Bool("include_unused");
        var statz = _documents.AccountStatz(includeUnused);
        if (accounts.Length > 0)
        {
            statz.Accounts = [.. statz.Accounts.Where(a => accounts.Contains(a.Account))];
        }
        return statz.Accounts.Count == 0 && !includeUnused ? ZResult.Skipped : Data(statz, MonitorJsonContext.Compact.AccountStatz);
    }

    /// <summary>Go's connsRequest: the account's connection counts to the reply, only when it has local connections.</summary>
    private void ConnsRequest(string subject, string reply, byte[] body)
    {
        var name = AccountOf(subject);
        if (name is null || reply.Length == 0)
        {
            return;
        }
        if (body.Length > 0)
        {
            try
            {
                using var document = JsonDocument.Parse(body);
                if (document.RootElement.ValueKind != JsonValueKind.Object
                    || !document.RootElement.TryGetProperty("acc", out var acc) || acc.GetString() != name)
                {
                    return;
                }
            }
            catch (Exception ex) when (ex is JsonException or InvalidOperationException)
            {
                return;
            }
        }
        if (_server.FindAccount(name) is { ClientCount: > 0 } account)
        {
            var stat = _documents.AccountStatFor(account);
            var id = _eventIds.Next();
            var now = DateTime.UtcNow;
            Publish(reply, "", json => WriteAccountConns(json, id, now, stat));
        }
    }

    /// <summary>The account token of $SYS.REQ.ACCOUNT.&lt;acc&gt;.&lt;X&gt;; null when the subject has another shape.</summary>
    /// <summary>Go's JszAccount: the account's JetStream detail, or Go's error texts.</summary>
    private ZResult JszAccount(string name, RequestOptions options)
    {
        if (_server.JetStream is not { } js)
        {
            return ZResult.Failed("jetstream not enabled");
        }
        if (_server.FindAccount(name) is not { } account)
        {
            return ZResult.Failed($"account \"{name}\" not found");
        }
        if (js.FindAccount(account) is not { } jsa)
        {
            return ZResult.Failed($"account \"{name}\" not jetstream enabled");
        }
        bool streams = options.Bool("streams"), consumers = options.Bool("consumer"), config = options.Bool("config");
        return new ZResult(json => JetStream.JszAccountDetail.Write(json, jsa, streams, consumers, config), null, false);
    }

    private static string? AccountOf(string subject)
    {
        return SubjectTokens.Count(subject) == 5 ? SubjectTokens.TokenAt(subject, 4) : null;
    }

    private static ZResult Malformed(string subject) => ZResult.Failed($"subject \"{subject}\" is malformed");

    private static ZResult Data<T>(T document, JsonTypeInfo<T> typeInfo) =>
        new(json => JsonSerializer.Serialize(json, document, typeInfo), null, false);

    private readonly record struct ZResult(Action<Utf8JsonWriter>? Write, string? Error, bool Skip)
    {
        public static ZResult Skipped => new(null, null, true);

        public static ZResult Failed(string error) => new(null, error, false);
    }
}
