namespace Nats.Storage.Tests;

/// <summary>
/// The test assembly doubles as a console helper: "crash-writer DIR BLOCKSIZE MODE" appends messages to a
/// file store and prints each sequence once its store call returned, until it is killed.
/// </summary>
public static class Program
{
    public static int Main(string[] args)
    {
        if (args.Length >= 1 && args[0] == "crash-writer")
        {
            return CrashWriter.Run(args[1], int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture),
                Enum.Parse<Nats.Storage.File.FileWriteMode>(args[3]));
        }

        Console.Error.WriteLine("usage: crash-writer DIR BLOCKSIZE WriteThrough|Buffered");
        return 2;
    }
}
