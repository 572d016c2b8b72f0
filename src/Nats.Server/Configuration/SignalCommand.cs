using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

namespace Nats.Server.Configuration;

/// <summary>
/// "-sl cmd[=pid|pidfile]": sends a running server the signal behind a command (Go's processSignal and
/// ProcessSignal in signal.go). Without a pid, the one process found by pgrep is used; with a value that
/// names a readable file, the file's content is the pid. Errors carry Go's wording.
/// </summary>
internal static partial class SignalCommand
{
    /// <summary>The name pgrep looks for when no pid is given (Go's processName).</summary>
    public const string DefaultProcessName = "nats-net-server";

    private const int Sigkill = 9;
    private const int Sigint = 2;
    private const int Sigterm = 15;
    private const int Sigusr1 = 10;
    private const int Sigusr2 = 12;
    private const int Sighup = 1;

    /// <summary>Sends the signal; returns null on success or the error text (printed after "nats-server: ").</summary>
    public static string? Send(string signal, string processName = DefaultProcessName, Func<int, int, int>? kill = null)
    {
        var parts = signal.Split('=');
        string pidText = "";
        if (parts.Length == 2)
        {
            pidText = MaybeReadPidFile(parts[1]);
        }
        else if (parts.Length > 2)
        {
            return $"invalid signal parameters: [{string.Join(' ', parts[2..])}]";
        }
        int pid;
        if (pidText.Length == 0)
        {
            // Go resolves the process before it looks at the command, so the order of errors is kept.
            var pids = ResolvePids(processName, out var error);
            if (error is not null)
            {
                return error;
            }
            if (pids.Count == 0)
            {
                return $"no {processName} processes running";
            }
            if (pids.Count > 1)
            {
                return $"multiple {processName} processes running:\n" + string.Join('\n', pids);
            }
            pid = pids[0];
        }
        else if (!TryParseAtoi(pidText, out pid))
        {
            return $"invalid pid: {pidText}";
        }
        int? number = parts[0] switch
        {
            "stop" => Sigkill,
            "quit" => Sigint,
            "reopen" => Sigusr1,
            "reload" => Sighup,
            "ldm" => Sigusr2,
            "term" => Sigterm,
            _ => null,
        };
        if (number is null)
        {
            return $"unknown signal \"{parts[0]}\"";
        }
        if (!OperatingSystem.IsLinux())
        {
            return "signals are only supported on Linux";
        }
        var rc = (kill ?? Kill)(pid, number.Value);
        return rc == 0 ? null : ErrnoText(rc);
    }

    /// <summary>Go's maybeReadPidFile: the content of the file when it can be read, else the text itself.</summary>
    private static string MaybeReadPidFile(string value)
    {
        try
        {
            return File.Exists(value) ? File.ReadAllText(value) : value;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return value;
        }
    }

    /// <summary>strconv.Atoi: optional sign and decimal digits only (so a trailing newline is invalid, as in Go).</summary>
    private static bool TryParseAtoi(string text, out int value) =>
        int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value)
        && !text.StartsWith(' ') && !text.EndsWith(' ');

    private static List<int> ResolvePids(string processName, out string? error)
    {
        error = null;
        var pids = new List<int>();
        string output;
        try
        {
            using var pgrep = Process.Start(new ProcessStartInfo("pgrep", processName)
            {
                RedirectStandardOutput = true,
                UseShellExecute = false,
            })!;
            output = pgrep.StandardOutput.ReadToEnd();
            pgrep.WaitForExit();
        }
        catch (System.ComponentModel.Win32Exception)
        {
            error = "unable to resolve pid, try providing one";
            return pids;
        }
        foreach (var line in output.Split('\n'))
        {
            if (line.Length == 0)
            {
                continue;
            }
            if (!TryParseAtoi(line, out var pid))
            {
                error = "unable to resolve pid, try providing one";
                return pids;
            }
            if (pid != Environment.ProcessId)
            {
                pids.Add(pid);
            }
        }
        return pids;
    }

    private static int Kill(int pid, int signal) =>
        SysKill(pid, signal) == 0 ? 0 : Marshal.GetLastPInvokeError();

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int SysKill(int pid, int signal);

    /// <summary>Go's syscall.Errno texts for what kill(2) can fail with.</summary>
    private static string ErrnoText(int errno) => errno switch
    {
        1 => "operation not permitted",
        3 => "no such process",
        22 => "invalid argument",
        _ => $"errno {errno}",
    };
}
