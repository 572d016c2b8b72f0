namespace Nats.LoadBench.Client;

/// <summary>Receives each MSG/HMSG the parser extracts, plus one call per socket read so
/// handlers can batch replies and timestamps instead of paying for them per message.</summary>
internal interface IMsgHandler
{
    void OnMsg(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload);

    void OnBatchEnd();
}
