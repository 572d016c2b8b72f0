namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// The Go project's own client as the fast publisher: tests/go/fastpub (see <see cref="NatsGoProgram"/>).
/// </summary>
internal static class NatsGoPublisher
{
    public static Task<string> BuildAsync() => NatsGoProgram.BuildAsync("fastpub");

    /// <summary>Publishes and flushes; returns nats.go's own rate line.</summary>
    public static Task<string> PublishAsync(int port, string subject, int count, int payloadSize, int publisherIndex) =>
        NatsGoProgram.RunAsync("fastpub", TimeSpan.FromMinutes(4),
            $"nats://127.0.0.1:{port}", subject, count.ToString(), payloadSize.ToString(), publisherIndex.ToString());
}
