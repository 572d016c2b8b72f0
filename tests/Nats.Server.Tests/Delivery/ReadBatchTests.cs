using Nats.Server.Delivery;

namespace Nats.Server.Tests.Delivery;

public class ReadBatchTests
{
    private sealed class Listener(List<string> log, string name, bool fail = false) : IReadBatchListener
    {
        public void OnReadBatchEnd()
        {
            log.Add(name);
            if (fail)
            {
                throw new InvalidOperationException(name);
            }
        }
    }

    [Fact]
    public void ListenersRunOnceWhenTheOutermostBatchCloses()
    {
        var log = new List<string>();
        Assert.False(ReadBatch.IsOpen);
        using (ReadBatch.Open())
        {
            Assert.True(ReadBatch.IsOpen);
            ReadBatch.AtEnd(new Listener(log, "a"));
            using (ReadBatch.Open())
            {
                ReadBatch.AtEnd(new Listener(log, "b"));
            }
            Assert.Empty(log);
        }
        Assert.Equal(["a", "b"], log);
        Assert.False(ReadBatch.IsOpen);

        // A new batch starts empty.
        using (ReadBatch.Open())
        {
        }
        Assert.Equal(2, log.Count);
    }

    [Fact]
    public void EveryListenerRunsEvenIfOneFails()
    {
        var log = new List<string>();
        var error = Assert.Throws<InvalidOperationException>(() =>
        {
            using var batch = ReadBatch.Open();
            ReadBatch.AtEnd(new Listener(log, "first", fail: true));
            ReadBatch.AtEnd(new Listener(log, "second"));
        });
        Assert.Equal("first", error.Message);
        Assert.Equal(["first", "second"], log);
        Assert.False(ReadBatch.IsOpen);
    }

    [Fact]
    public void WhatAListenerPublishesIsNotDeferredAgain()
    {
        var open = new List<bool>();
        using (ReadBatch.Open())
        {
            ReadBatch.AtEnd(new Probe(open));
        }
        Assert.Equal([false], open);
    }

    private sealed class Probe(List<bool> open) : IReadBatchListener
    {
        public void OnReadBatchEnd() => open.Add(ReadBatch.IsOpen);
    }
}
