using Microsoft.Win32.SafeHandles;

namespace Nats.Server.Hosting;

/// <summary>
/// The process's resident set size in bytes, read from /proc/self/statm on Linux.
/// </summary>
/// <remarks>
/// <see cref="Environment.WorkingSet"/> gives the same number (Process.WorkingSet64 reads the rss field of
/// /proc/self/stat), but reaches System.Diagnostics.Process through reflection and builds a Process object per
/// call: the idle trimmer reads it four times a second while the server is quiet, and in the Native AOT binary that
/// path kept reflection metadata and Process code resident and allocated on every tick of an idle server.
/// </remarks>
internal static class ResidentMemory
{
    public static long Bytes()
    {
        if (OperatingSystem.IsLinux() && TryReadStatm(out var pages))
        {
            return pages * Environment.SystemPageSize;
        }
        return Environment.WorkingSet;
    }

    /// <summary>statm is "size resident shared text lib data dt" in pages; the second field is the resident set.</summary>
    internal static bool TryParseStatm(ReadOnlySpan<byte> statm, out long residentPages)
    {
        residentPages = 0;
        var space = statm.IndexOf((byte)' ');
        if (space < 0)
        {
            return false;
        }
        var rest = statm[(space + 1)..];
        var digits = 0;
        while (digits < rest.Length && rest[digits] is >= (byte)'0' and <= (byte)'9')
        {
            residentPages = residentPages * 10 + (rest[digits] - '0');
            digits++;
        }
        return digits > 0;
    }

    private static bool TryReadStatm(out long residentPages)
    {
        residentPages = 0;
        try
        {
            using SafeFileHandle handle = File.OpenHandle("/proc/self/statm");
            Span<byte> buffer = stackalloc byte[128];
            var read = RandomAccess.Read(handle, buffer, 0);
            return TryParseStatm(buffer[..read], out residentPages);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }
}
