using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Nats.Storage.IO;

/// <summary>
/// The two syncs .NET does not offer: fdatasync (RandomAccess.FlushToDisk is a full fsync, which also
/// writes back timestamps the store never needs) and fsync of a directory (File.OpenHandle refuses
/// directories). Linux only; elsewhere the file sync falls back to FlushToDisk and directory sync is a
/// no-op (Windows persists directory entries with the file system's metadata journal).
/// </summary>
internal static partial class NativeSync
{
    private static readonly bool Linux = OperatingSystem.IsLinux();

    public static void DataSync(SafeFileHandle handle)
    {
        if (!Linux)
        {
            RandomAccess.FlushToDisk(handle);
            return;
        }
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            if (fdatasync((int)handle.DangerousGetHandle()) != 0)
            {
                throw Error("fdatasync", Marshal.GetLastPInvokeError());
            }
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    public static void SyncDirectory(string path)
    {
        if (!Linux)
        {
            return;
        }

        var fd = open(path, O_RDONLY | ODirectory | O_CLOEXEC);
        if (fd < 0)
        {
            throw Error("open directory " + path, Marshal.GetLastPInvokeError());
        }

        try
        {
            if (fsync(fd) != 0)
            {
                throw Error("fsync directory " + path, Marshal.GetLastPInvokeError());
            }
        }
        finally
        {
            close(fd);
        }
    }

    private const int O_RDONLY = 0;
    private const int O_CLOEXEC = 0x80000;

    // O_DIRECTORY differs between Linux architectures (asm-generic vs x86).
    private static readonly int ODirectory = RuntimeInformation.ProcessArchitecture is Architecture.Arm64 or Architecture.Arm ? 0x4000 : 0x10000;

    private static IOException Error(string what, int errno) => new($"{what} failed: errno {errno} ({Marshal.GetPInvokeErrorMessage(errno)})");

    [LibraryImport("libc", SetLastError = true)]
    private static partial int fdatasync(int fd);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int fsync(int fd);

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int open(string path, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int close(int fd);
}
