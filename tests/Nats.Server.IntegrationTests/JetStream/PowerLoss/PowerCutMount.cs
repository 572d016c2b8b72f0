using System.Diagnostics;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.JetStream.PowerLoss;

/// <summary>
/// tests/tools/powercut-fs.py mounted on a temporary directory: a FUSE file system that keeps in memory
/// every write and directory change not yet fsynced and drops them at <see cref="CutAsync"/>, as a power
/// cut would (Debian python3-fusepy and fuse3; scripts/test.sh installs them).
/// </summary>
internal sealed class PowerCutMount : IAsyncDisposable
{
    private readonly Process _process;
    private readonly Operations.LogLines _output = new();
    private readonly string _root;

    private PowerCutMount(Process process, string root, string mountPoint)
    {
        _process = process;
        _root = root;
        MountPoint = mountPoint;
    }

    public string MountPoint { get; }

    public static async Task<PowerCutMount> StartAsync()
    {
        Assert.True(File.Exists("/dev/fuse"), "/dev/fuse is missing: the power-cut file system needs FUSE");
        var root = Directory.CreateTempSubdirectory("nats-powercut-").FullName;
        var mountPoint = Path.Combine(root, "mnt");
        Directory.CreateDirectory(mountPoint);
        var psi = new ProcessStartInfo("/usr/bin/python3")
        {
            ArgumentList = { Path.Combine(RepoPaths.Root, "tests", "tools", "powercut-fs.py"), mountPoint },
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        var process = new Process { StartInfo = psi };
        var mount = new PowerCutMount(process, root, mountPoint);
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) { mount._output.Add(e.Data); } };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { mount._output.Add("stderr: " + e.Data); } };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        await mount._output.WaitForAsync(l => l == "ready" || l.StartsWith("stderr: ", StringComparison.Ordinal), timeout: TimeSpan.FromSeconds(60));
        Assert.True(mount._output.Text.Contains("ready", StringComparison.Ordinal), "powercut-fs did not mount:\n" + mount._output.Text);
        return mount;
    }

    /// <summary>Everything not fsynced is gone; call only when no process uses the mount.</summary>
    public async Task CutAsync()
    {
        var from = _output.Count;
        await _process.StandardInput.WriteLineAsync("cut");
        await _process.StandardInput.FlushAsync();
        await _output.WaitForAsync("cut ok", from, TimeSpan.FromSeconds(60));
    }

    /// <summary>From now on every fsync (file or directory) blocks before it takes effect, until <see cref="ReleaseAsync"/>:
    /// nothing written becomes durable, as on a device whose cache flush has not finished.</summary>
    public Task HoldAsync()
    {
        _holdFrom = _output.Count;
        return CommandAsync("hold", "hold ok");
    }

    private int _holdFrom;

    public Task ReleaseAsync() => CommandAsync("release", "release ok");

    /// <summary>The next file fsync fails once with EIO (its pages marked clean, not durable); returns once armed.</summary>
    public Task FailNextSyncAsync()
    {
        _eioFrom = _output.Count;
        return CommandAsync("eio", "eio ok");
    }

    private int _eioFrom;

    /// <summary>The path whose fsync failed, once one has since <see cref="FailNextSyncAsync"/>.</summary>
    public async Task<string> FailedSyncAsync()
    {
        var (line, _) = await _output.WaitForAsync(l => l.StartsWith("eio /", StringComparison.Ordinal), _eioFrom, timeout: TimeSpan.FromSeconds(60));
        return line["eio ".Length..];
    }

    /// <summary>The path of the first sync blocked since <see cref="HoldAsync"/>, once one is.</summary>
    public async Task<string> HeldSyncAsync()
    {
        var (line, _) = await _output.WaitForAsync(l => l.StartsWith("held ", StringComparison.Ordinal), _holdFrom, timeout: TimeSpan.FromSeconds(60));
        return line["held ".Length..];
    }

    private async Task CommandAsync(string command, string answer)
    {
        var from = _output.Count;
        await _process.StandardInput.WriteLineAsync(command);
        await _process.StandardInput.FlushAsync();
        await _output.WaitForAsync(answer, from, TimeSpan.FromSeconds(60));
    }

    /// <summary>Counts of file and directory syncs the file system has seen (for the test's output).</summary>
    public async Task<string> StatsAsync()
    {
        var from = _output.Count;
        await _process.StandardInput.WriteLineAsync("stats");
        await _process.StandardInput.FlushAsync();
        var (line, _) = await _output.WaitForAsync("stats ", from, TimeSpan.FromSeconds(60));
        return line;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _process.StandardInput.WriteLineAsync("quit");
            _process.StandardInput.Close();
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
        }
        catch (Exception e) when (e is TimeoutException or IOException or InvalidOperationException)
        {
            if (!_process.HasExited)
            {
                _process.Kill();
                await _process.WaitForExitAsync();
            }
            using var umount = Process.Start("umount", ["-l", MountPoint]);
            await umount.WaitForExitAsync();
        }
        _process.Dispose();
        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
