namespace Nats.Storage.Tests;

/// <summary>
/// Random operation sequences applied to both engines must give identical answers; the file engine is
/// also stopped and reopened at random points, so recovery must reproduce the exact same state.
/// </summary>
public sealed class PropertyTests
{
    private static readonly string[] SubjectPool = ["a", "b", "a.x", "a.y", "a.x.1", "a.y.2", "c.d.e", "q"];
    private static readonly string[] Filters = ["", ">", "a", "a.*", "a.>", "*.x", "*.*.*", "c.>", "q", "nope", "a.x.*", "*"];

    public static TheoryData<int> Seeds()
    {
        // NATS_STORAGE_PROPERTY_SEEDS widens the sweep for a soak run; the default keeps the suite quick.
        var count = int.TryParse(Environment.GetEnvironmentVariable("NATS_STORAGE_PROPERTY_SEEDS"), out var n) ? n : 24;
        var data = new TheoryData<int>();
        for (var i = 1; i <= count; i++)
        {
            data.Add(i);
        }

        return data;
    }

    [Theory, MemberData(nameof(Seeds))]
    public void EnginesAgreeOnRandomOperations(int seed)
    {
        var rng = new Random(seed);
        var config = (seed % 4) switch
        {
            0 => new StoreConfig { Name = "P" },
            1 => new StoreConfig { Name = "P", MaxMsgsPerSubject = 4 },
            2 => new StoreConfig { Name = "P", MaxMsgs = 40, MaxAge = TimeSpan.FromSeconds(30) },
            _ => new StoreConfig { Name = "P", MaxMsgs = 60, Discard = DiscardPolicy.New },
        };
        var clock = new ManualClock();
        using var mem = new StoreHarness("memory", config, clock: clock);
        // Odd seeds keep a single block cached, so reads, compaction and rotation keep evicting and
        // reloading pooled caches.
        using var file = new StoreHarness("file", config, blockSize: 300 + seed * 20, clock: clock)
        {
            MaxCachedBlocks = seed % 2 == 1 ? 1 : 4,
            // Index chunks of 8-64 sequences with room for two: nearly every operation evicts chunks and
            // rebuilds others from block indexes (or, for the active block, from its records).
            IndexPageShift = 3 + seed % 4,
            MaxIndexBytes = seed % 3 == 0 ? 8 << 20 : 1,
        };
        file.Reopen();

        var history = new List<string>();
        for (var step = 0; step < 400; step++)
        {
            var op = rng.Next(100);
            var opName = $"seed {seed} step {step} op {op}";
            try
            {
                var a = Apply(mem.Store, op, rng.Next(), clock, first: true);
                var b = Apply(file.Store, op, a.Arg, clock, first: false);
                history.Add($"{op}:{a.Result}");
                Assert.True(a.Result == b.Result, $"{opName}: memory={a.Result} file={b.Result}");
                if (op == 99)
                {
                    file.Reopen();
                }

                if (op == 98)
                {
                    file.Store.FlushAllPending();
                }

                CompareQueries(mem.Store, file.Store, rng, $"{opName} after [{string.Join(", ", history.TakeLast(8))}]");
            }
            catch (Exception e) when (e is not Xunit.Sdk.XunitException)
            {
                throw new InvalidOperationException($"{opName} after [{string.Join(", ", history.TakeLast(12))}]", e);
            }
        }
        file.Reopen();
        CompareQueries(mem.Store, file.Store, rng, $"seed {seed} final");
        CompareEverything(mem.Store, file.Store);
    }

    private readonly record struct Outcome(string Result, int Arg);

    // Both stores receive the same argument stream: the memory call draws it, the file call replays it.
    private static Outcome Apply(IStreamStore s, int op, int arg, ManualClock clock, bool first)
    {
        var r = new Random(arg);
        try
        {
            var st = s.State();
            ulong PickSeq() => (ulong)Math.Max(0, (long)st.FirstSeq + r.Next(-2, (int)Math.Max(1, (long)st.LastSeq - (long)st.FirstSeq + 3)));
            switch (op)
            {
                case < 50:
                    {
                        var subj = SubjectPool[r.Next(SubjectPool.Length)];
                        var hdr = r.Next(4) == 0 ? Bytes.Of("NATS/1.0\r\nk: v\r\n\r\n") : [];
                        var data = new byte[r.Next(0, 60)];
                        r.NextBytes(data);
                        var ttl = r.Next(10) == 0 ? r.Next(1, 20) : 0;
                        var (seq, ts) = s.StoreMsg(subj, hdr, data, ttl);
                        return new($"stored {seq} {ts}", arg);
                    }
                case < 62:
                    return new($"removed {s.RemoveMsg(PickSeq())}", arg);
                case < 65:
                    return new($"erased {s.EraseMsg(PickSeq())}", arg);
                case < 67:
                    return new($"purged {s.Purge()}", arg);
                case < 73:
                    {
                        var f = Filters[r.Next(Filters.Length)];
                        var seq = r.Next(3) == 0 ? PickSeq() : 0;
                        var keep = (ulong)(r.Next(3) == 0 ? r.Next(0, 4) : 0);
                        return new($"purgeEx {s.PurgeEx(f, seq, keep)}", arg);
                    }
                case < 76:
                    return new($"compacted {s.Compact(PickSeq())}", arg);
                case < 78:
                    {
                        var seq = st.LastSeq - (ulong)Math.Min((long)st.LastSeq, r.Next(0, 6));
                        if (seq + 1 < st.FirstSeq)
                        {
                            return new("skip truncate", arg);
                        }

                        s.Truncate(seq);
                        return new($"truncated {seq}", arg);
                    }
                case < 82:
                    return new($"skipped {s.SkipMsg()}", arg);
                case < 90:
                    {
                        if (first)
                        {
                            clock.Advance(TimeSpan.FromSeconds(r.Next(1, 10)));
                        }

                        s.ExpireMessages();
                        return new("expired", arg);
                    }
                default:
                    return new("noop", arg);
            }
        }
        catch (StoreException e)
        {
            return new($"error {e.Error}", arg);
        }
    }

    private static void CompareQueries(IStreamStore m, IStreamStore f, Random rng, string where)
    {
        var sm = m.State();
        var sf = f.State();
        Assert.True(sm.Msgs == sf.Msgs && sm.FirstSeq == sf.FirstSeq && sm.LastSeq == sf.LastSeq
                    && sm.NumSubjects == sf.NumSubjects && sm.NumDeleted == sf.NumDeleted
                    && sm.FirstTime == sf.FirstTime && sm.LastTime == sf.LastTime,
            $"{where}: state memory={sm} file={sf}");
        Assert.Null(sf.Lost);
        for (var i = 0; i < 4; i++)
        {
            var filter = Filters[rng.Next(Filters.Length)];
            var start = (ulong)Math.Max(0, (long)sm.FirstSeq + rng.Next(-3, (int)Math.Max(1, (long)sm.LastSeq - (long)sm.FirstSeq + 4)));
            Assert.Equal(Describe(m.LoadMsg(start)), Describe(f.LoadMsg(start)));
            Assert.Equal(Describe(m.LoadNextMsg(filter, start)), Describe(f.LoadNextMsg(filter, start)));
            Assert.Equal(Describe(m.LoadPrevMsg(filter, start)), Describe(f.LoadPrevMsg(filter, start)));
            Assert.Equal(Describe(m.LoadLastMsg(filter)), Describe(f.LoadLastMsg(filter)));
            Assert.Equal(m.FilteredState(start, filter), f.FilteredState(start, filter));
            Assert.Equal(m.NumPending(start, filter, true), f.NumPending(start, filter, true));
            Assert.Equal(Sorted(m.SubjectsState(filter)), Sorted(f.SubjectsState(filter)));
        }
    }

    private static void CompareEverything(IStreamStore m, IStreamStore f)
    {
        var st = m.State();
        for (var s = st.FirstSeq; s <= st.LastSeq; s++)
        {
            Assert.Equal(Describe(m.LoadMsg(s)), Describe(f.LoadMsg(s)));
        }

        Assert.Equal(m.DeletedSeqs(), f.DeletedSeqs());
        Assert.Equal(m.AllLastSeqs(), f.AllLastSeqs());
    }

    private static string Sorted(Dictionary<string, SimpleState> d)
        => string.Join(";", d.OrderBy(kv => kv.Key, StringComparer.Ordinal).Select(kv => $"{kv.Key}={kv.Value}"));

    private static string Describe(StoredMessage? m) => m is null
        ? "none"
        : $"{m.Sequence} {m.Subject} {m.Timestamp} {Convert.ToHexString(m.Header.Span)} {Convert.ToHexString(m.Data.Span)}";
}
