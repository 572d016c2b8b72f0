using System.Collections.Concurrent;
using Nats.Server.IntegrationTests.Cluster;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Nats.Server.IntegrationTests.JetStream.Cluster.Faults;

/// <summary>
/// A durable pull consumer (explicit acks, as many replicas as the stream) drained by a NATS.Net client through the
/// whole fault trial, the way an application's worker reads: fetch, ack each, fetch again, and after any error
/// look the consumer up again and go on. At the end of a trial it must have seen every acknowledged message.
/// </summary>
internal sealed class FaultConsumer : IAsyncDisposable
{
    public const string Durable = "DRAIN";

    private readonly NatsConnection _connection;
    private readonly CancellationTokenSource _stop = new();
    private Task _loop = Task.CompletedTask;
    private TaskCompletionSource _progress = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _errors;
    private int _disposed;

    private FaultConsumer(NatsConnection connection) => _connection = connection;

    /// <summary>Payload → the stream sequence it was delivered with.</summary>
    public ConcurrentDictionary<string, ulong> Seen { get; } = new();

    public int Errors => Volatile.Read(ref _errors);

    /// <summary>Creates the durable through <paramref name="server"/> and starts draining it there.</summary>
    public static async Task<FaultConsumer> StartAsync(ClusterServer server, string stream, CancellationToken token)
    {
        var connection = new NatsConnection(ReplicatedStreamTests.App(server) with
        {
            RequestTimeout = TimeSpan.FromSeconds(5),
            ConnectTimeout = TimeSpan.FromSeconds(30),
            MaxReconnectRetry = -1,
            ReconnectWaitMin = TimeSpan.FromMilliseconds(100),
            ReconnectWaitMax = TimeSpan.FromMilliseconds(500),
        });
        var consumer = new FaultConsumer(connection);
        var js = new NatsJSContext(connection);
        while (true)
        {
            try
            {
                await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig(Durable) { AckPolicy = ConsumerConfigAckPolicy.Explicit }, token);
                break;
            }
            catch (NatsJSApiNoResponseException)
            {
                // The stream just created has no leader yet to answer.
            }
        }
        consumer._loop = Task.Run(() => consumer.DrainAsync(js, stream, token), CancellationToken.None);
        return consumer;
    }

    /// <summary>Waits (bounded by <paramref name="timeout"/>) until every payload of <paramref name="acked"/> was seen;
    /// returns those still not seen.</summary>
    public async Task<List<string>> WaitForAsync(IReadOnlyDictionary<string, ulong> acked, TimeSpan timeout, CancellationToken token)
    {
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(token);
        cts.CancelAfter(timeout);
        while (true)
        {
            var progress = Volatile.Read(ref _progress).Task;
            var missing = acked.Keys.Where(k => !Seen.ContainsKey(k)).ToList();
            if (missing.Count == 0)
            {
                return missing;
            }
            try
            {
                await progress.WaitAsync(cts.Token);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                return missing;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }
        await _stop.CancelAsync();
        await _loop;
        await _connection.DisposeAsync();
    }

    private async Task DrainAsync(NatsJSContext js, string stream, CancellationToken token)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(token, _stop.Token);
        var cancel = linked.Token;
        while (!cancel.IsCancellationRequested)
        {
            try
            {
                var consumer = await js.GetConsumerAsync(stream, Durable, cancel);
                while (!cancel.IsCancellationRequested)
                {
                    await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 500, Expires = TimeSpan.FromSeconds(2) }, cancellationToken: cancel))
                    {
                        if (msg.Data is { } payload && msg.Metadata is { } metadata)
                        {
                            Seen.TryAdd(payload, metadata.Sequence.Stream);
                        }
                        await msg.AckAsync(cancellationToken: cancel);
                    }
                    Interlocked.Exchange(ref _progress, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
                }
            }
            catch (OperationCanceledException) when (cancel.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
            {
                // No leader for the consumer yet, or the connection is down: look it up again shortly.
                Interlocked.Increment(ref _errors);
                try
                {
                    await Task.Delay(100, cancel);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }
}
