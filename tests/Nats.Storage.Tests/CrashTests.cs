using System.Diagnostics;
using System.Globalization;

namespace Nats.Storage.Tests;

/// <summary>
/// Kills a writer process (SIGKILL) at random points, many times over one directory, and checks that
/// every message whose store call returned is readable with its exact bytes after restart, that
/// acknowledged removals stay removed, that no sequence is ever handed out twice, and that anything
/// reported lost was never acknowledged.
/// </summary>
public sealed class CrashTests
{
    [Theory]
    [InlineData(nameof(File.FileWriteMode.WriteThrough))]
    [InlineData(nameof(File.FileWriteMode.Buffered))]
    [InlineData(nameof(File.FileWriteMode.BufferedMessages))]
    public void EveryAcknowledgedSequenceSurvivesKillNine(string modeName)
    {
        var mode = Enum.Parse<File.FileWriteMode>(modeName);
        using var dir = new TempDir();
        var rng = new Random(7);
        var stored = new Dictionary<ulong, int>();
        var removed = new HashSet<ulong>();
        var mayBeRemoved = new HashSet<ulong>(); // removal started but not acknowledged before a kill
        var assembly = typeof(CrashTests).Assembly.Location;
        const int rounds = 8;
        for (var round = 0; round < rounds; round++)
        {
            var target = rng.Next(1, 3000);
            var lines = RunAndKill(assembly, dir.Path, blockSize: 16 * 1024, target, round, mode);
            foreach (var line in lines)
            {
                var parts = line.Split(' ');
                var seq = ulong.Parse(parts[1], CultureInfo.InvariantCulture);
                switch (parts[0])
                {
                    case "S":
                        Assert.True(stored.TryAdd(seq, int.Parse(parts[2], CultureInfo.InvariantCulture)), $"sequence {seq} was handed out twice");
                        break;
                    case "T":
                        mayBeRemoved.Add(seq);
                        break;
                    default:
                        removed.Add(seq);
                        break;
                }
            }

            var warnings = new List<string>();
            using var store = StreamStores.OpenFile(new StoreConfig { Name = "CRASH" },
                new File.FileStoreOptions { Directory = dir.Path, BlockSize = 16 * 1024, Warn = warnings.Add });
            var sm = new StoredMessage();
            foreach (var (seq, token) in stored)
            {
                var m = store.LoadMsg(seq, sm);
                if (removed.Contains(seq))
                {
                    Assert.Null(m);
                    continue;
                }
                if (m is null && mayBeRemoved.Contains(seq))
                {
                    removed.Add(seq);
                    continue;
                }
                Assert.True(m is not null, $"round {round}: acknowledged message {seq} is missing; warnings: {string.Join(" | ", warnings)}");
                Assert.Equal($"crash.{token % 7}", m.Subject);
                Assert.True(m.Data.Span.SequenceEqual(CrashWriter.CrashPayload(token)), $"message {seq} has wrong bytes");
            }
            // A kill in the middle of writing records nobody was told about yet (a buffered flush spans
            // pages, and the kernel may stop a write between pages on SIGKILL) leaves a torn tail; it
            // is reported as lost, but it must never include an acknowledged message.
            if (store.State().Lost is { } lost)
            {
                Assert.DoesNotContain(lost.Sequences, s => stored.ContainsKey(s) && !mayBeRemoved.Contains(s));
            }

            store.Stop();
        }
        Assert.True(stored.Count > rounds, "the writer never got going");
    }

    private static List<string> RunAndKill(string assembly, string dir, int blockSize, int target, int round, File.FileWriteMode mode)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(assembly);
        psi.ArgumentList.Add("crash-writer");
        psi.ArgumentList.Add(dir);
        psi.ArgumentList.Add(blockSize.ToString(CultureInfo.InvariantCulture));
        psi.ArgumentList.Add(mode.ToString());
        using var child = Process.Start(psi)!;
        var lines = new List<string>();
        var enough = new ManualResetEventSlim();
        var errors = new System.Text.StringBuilder();
        child.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (errors)
                {
                    errors.AppendLine(e.Data);
                }
            }
        };
        child.BeginErrorReadLine();
        var reader = new Thread(() =>
        {
            // Raw reads: a line cut by the kill lacks its " ." terminator and is ignored.
            string? line;
            while ((line = child.StandardOutput.ReadLine()) is not null)
            {
                if (!line.EndsWith(" .", StringComparison.Ordinal))
                {
                    continue;
                }

                lock (lines)
                {
                    lines.Add(line[..^2]);
                    if (lines.Count >= target)
                    {
                        enough.Set();
                    }
                }
            }
            enough.Set();
        });
        reader.Start();
        var ok = enough.Wait(TimeSpan.FromSeconds(60));
        try
        {
            child.Kill();
        }
        catch (InvalidOperationException)
        {
        }
        child.WaitForExit();
        reader.Join();
        Assert.True(ok, $"round {round}: writer produced too little output; stderr: {errors}");
        lock (lines)
        {
            Assert.True(lines.Count > 0, $"round {round}: writer exited early; stderr: {errors}");
            return [.. lines];
        }
    }
}
