using System.Buffers.Binary;
using System.Threading.Channels;
using NATS.Client.Core;

namespace Nats.Server.IntegrationTests.Clients;

/// <summary>
/// A NATS.Net subscriber that counts what it receives and checks each publisher's sequence is in
/// order. Its client-side queue waits instead of dropping, so whatever goes missing was lost by the
/// server; it does not reconnect, so a cut connection is seen as a failure.
/// </summary>
internal sealed class CountingSubscriber : IAsyncDisposable
{
    private readonly NatsConnection _connection;
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly long _expected;
    private readonly long[] _nextSequence;
    private Task? _reader;

    private CountingSubscriber(NatsConnection connection, long expected, int publishers)
    {
        _connection = connection;
        _expected = expected;
        _nextSequence = new long[publishers];
    }

    public long Received { get; private set; }

    public string? Failure { get; private set; }

    public Task Done => _done.Task;

    public static async Task<CountingSubscriber> StartAsync(int port, string subject, long expected, int publishers)
    {
        var connection = new NatsConnection(new NatsOpts
        {
            Url = $"nats://127.0.0.1:{port}",
            SubPendingChannelCapacity = 64 * 1024,
            SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
            MaxReconnectRetry = 0,
        });
        var subscriber = new CountingSubscriber(connection, expected, publishers);
        connection.ConnectionDisconnected += (_, _) =>
        {
            subscriber.Fail($"disconnected after {subscriber.Received} of {expected}");
            return ValueTask.CompletedTask;
        };
        await connection.ConnectAsync();
        var subscription = await connection.SubscribeCoreAsync<byte[]>(subject);
        await connection.PingAsync();
        subscriber._reader = Task.Run(() => subscriber.ReadAsync(subscription));
        return subscriber;
    }

    private async Task ReadAsync(INatsSub<byte[]> subscription)
    {
        await using var _ = subscription;
        await foreach (var message in subscription.Msgs.ReadAllAsync())
        {
            var data = message.Data!;
            var publisher = data[0];
            var sequence = BinaryPrimitives.ReadInt64LittleEndian(data.AsSpan(1));
            if (sequence != _nextSequence[publisher])
            {
                Fail($"publisher {publisher}: got sequence {sequence}, expected {_nextSequence[publisher]}");
                return;
            }
            _nextSequence[publisher]++;
            if (++Received == _expected)
            {
                _done.TrySetResult();
                return;
            }
        }
    }

    private void Fail(string reason)
    {
        Failure ??= reason;
        _done.TrySetResult();
    }

    public async ValueTask DisposeAsync()
    {
        await _connection.DisposeAsync();
        if (_reader is not null)
        {
            await Task.WhenAny(_reader, Task.Delay(TimeSpan.FromSeconds(10)));
        }
    }
}
