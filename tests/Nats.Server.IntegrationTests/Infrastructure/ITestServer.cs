namespace Nats.Server.IntegrationTests.Infrastructure;

/// <summary>A running server a test talks to over TCP on 127.0.0.1.</summary>
internal interface ITestServer : IAsyncDisposable
{
    /// <summary>"go" or "ours", for messages.</summary>
    string Kind { get; }

    int Port { get; }

    string Url => $"nats://127.0.0.1:{Port}";
}
