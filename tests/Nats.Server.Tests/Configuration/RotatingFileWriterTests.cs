using Nats.Server.Logging;

namespace Nats.Server.Tests.Configuration;

public class RotatingFileWriterTests
{
    [Fact]
    public void AppendsToAnExistingFile()
    {
        using var dir = new TempDirectory();
        string path = dir.Write("server.log", "old line\n");
        using (var writer = new RotatingFileWriter(path, 0))
        {
            writer.WriteLine("new line");
            writer.Flush();
        }
        Assert.Equal("old line\nnew line\n", File.ReadAllText(path));
    }

    [Fact]
    public void RotatesWhenTheLimitIsExceeded()
    {
        using var dir = new TempDirectory();
        string path = System.IO.Path.Combine(dir.Path, "server.log");
        var when = new DateTime(2024, 3, 4, 5, 6, 7, DateTimeKind.Local).AddTicks(1234567);
        using var writer = new RotatingFileWriter(path, 20, () => when);

        writer.WriteLine("0123456789");
        Assert.Null(writer.LastBackup);
        writer.WriteLine("abcdefghij");
        writer.Flush();

        Assert.Equal(path + ".2024.03.04.05.06.07.123456700", writer.LastBackup);
        Assert.Equal("0123456789\nabcdefghij\n", File.ReadAllText(writer.LastBackup!));
        Assert.Contains("[INF] Rotated log, backup saved as", File.ReadAllText(path));
    }

    [Fact]
    public void ReopenRecreatesAMovedFile()
    {
        using var dir = new TempDirectory();
        string path = System.IO.Path.Combine(dir.Path, "server.log");
        using var writer = new RotatingFileWriter(path, 0);
        writer.WriteLine("first");
        writer.Flush();
        File.Move(path, path + ".1");

        writer.Reopen();
        writer.WriteLine("second");
        writer.Flush();

        Assert.Equal("first\n", File.ReadAllText(path + ".1"));
        Assert.Equal("second\n", File.ReadAllText(path));
    }
}
