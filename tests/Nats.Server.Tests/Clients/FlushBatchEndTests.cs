using Nats.Server.Clients;
using Nats.Server.Configuration;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Clients;

/// <summary>The end-of-batch hook of <see cref="FlushBatch"/>: what receivers postpone to the end of a read.</summary>
public class FlushBatchEndTests
{
    private sealed class Listener(List<string> log, string name, bool fail = false) : IBatchEndListener
    {
        public void OnBatchEnd()
        {
            log.Add(name);
            if (fail)
            {
                throw new InvalidOperationException(name);
            }
        }
    }

    private static FlushBatch NewBatch() => new(new NatsServer(new ServerOptions()));

    [Fact]
    public void ListenersRunOnceWhenTheOutermostScopeCloses()
    {
        var batch = NewBatch();
        var log = new List<string>();
        Assert.False(batch.IsOpen);
        using (batch.Open())
        {
            Assert.True(batch.IsOpen);
            batch.AtEnd(new Listener(log, "a"));
            using (batch.Open())
            {
                batch.AtEnd(new Listener(log, "b"));
            }
            Assert.Empty(log);
        }
        Assert.Equal(["a", "b"], log);
        Assert.False(batch.IsOpen);

        // A new batch starts empty.
        using (batch.Open())
        {
        }
        Assert.Equal(2, log.Count);
    }

    [Fact]
    public void EveryListenerRunsEvenIfOneFails()
    {
        var batch = NewBatch();
        var log = new List<string>();
        var error = Assert.Throws<InvalidOperationException>(() =>
        {
            using var scope = batch.Open();
            batch.AtEnd(new Listener(log, "first", fail: true));
            batch.AtEnd(new Listener(log, "second"));
        });
        Assert.Equal("first", error.Message);
        Assert.Equal(["first", "second"], log);
        Assert.False(batch.IsOpen);
    }

    [Fact]
    public void WhatAListenerPublishesIsNotDeferredAgain()
    {
        var batch = NewBatch();
        var open = new List<bool>();
        using (batch.Open())
        {
            batch.AtEnd(new Probe(batch, open));
        }
        Assert.Equal([false], open);
    }

    [Fact]
    public void OneBatchIsOpenOnlyForItsOwnPublisher()
    {
        var first = NewBatch();
        var second = NewBatch();
        using (first.Open())
        {
            Assert.True(first.IsOpen);
            Assert.False(second.IsOpen);
        }
    }

    private sealed class Probe(FlushBatch batch, List<bool> open) : IBatchEndListener
    {
        public void OnBatchEnd() => open.Add(batch.IsOpen);
    }
}
