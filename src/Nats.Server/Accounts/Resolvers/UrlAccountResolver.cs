using System.Net;

namespace Nats.Server.Accounts.Resolvers;

/// <summary>
/// Go's URLAccResolver (<c>resolver: URL("...")</c> or the operator's account_server_url): GET
/// &lt;url&gt;/&lt;account key&gt;, 1.9 s timeout, the body is the JWT. Nothing is cached here: a fetched
/// account stays in the registry, as in Go. Read-only.
/// </summary>
internal sealed class UrlAccountResolver : IAccountResolver, IDisposable
{
    /// <summary>Go's DEFAULT_ACCOUNT_FETCH_TIMEOUT.</summary>
    public static readonly TimeSpan FetchTimeout = TimeSpan.FromMilliseconds(1900);

    private readonly string _url;
    private readonly HttpClient _http;

    public UrlAccountResolver(string url)
    {
        _url = url.EndsWith('/') ? url : url + "/";
        _http = new HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = 10, PooledConnectionIdleTimeout = TimeSpan.FromSeconds(30) })
        {
            Timeout = FetchTimeout,
        };
    }

    public bool TracksUpdates => false;

    public bool AllowDelete => false;

    /// <summary>The last fetch failure in Go's words (for the debug log), null after a success.</summary>
    public string? LastError { get; private set; }

    /// <summary>
    /// Blocks the caller (a connection's CONNECT, as Go's client goroutine) for at most the timeout;
    /// null when the server does not answer 200.
    /// </summary>
    public string? Fetch(string accountKey)
    {
        var url = _url + accountKey;
        try
        {
            using var response = _http.GetAsync(url, HttpCompletionOption.ResponseContentRead).GetAwaiter().GetResult();
            if (response.StatusCode != HttpStatusCode.OK)
            {
                LastError = $"could not fetch <\"{url}\">: {(int)response.StatusCode} {response.ReasonPhrase}";
                return null;
            }
            LastError = null;
            return response.Content.ReadAsStringAsync().GetAwaiter().GetResult();
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or IOException)
        {
            LastError = $"could not fetch <\"{url}\">: {e.Message}";
            return null;
        }
    }

    public void Store(string accountKey, string jwt) => throw new InvalidOperationException("store operation not supported for URL Resolver");

    public IReadOnlyList<string> List() => [];

    public bool Delete(string accountKey) => false;

    public void Dispose() => _http.Dispose();
}
