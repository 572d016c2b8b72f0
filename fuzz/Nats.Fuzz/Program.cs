using Nats.Fuzz;

// Nats.Fuzz <target>                  run under afl-fuzz (input on stdin or in afl's shared memory, persistent mode)
// Nats.Fuzz <target> --replay PATH... run files (or every file of a directory) once each, in this process: a finding's
//                                     stack trace, or the corpus as a smoke test; exit 1 when any input fails
// Nats.Fuzz --list                    the target names
if (args.Length == 1 && args[0] == "--list")
{
    foreach (var name in FuzzTargets.Names)
    {
        Console.WriteLine(name);
    }
    return 0;
}
if (args.Length == 0 || !FuzzTargets.TryGet(args[0], out var target))
{
    Console.Error.WriteLine($"usage: Nats.Fuzz <{string.Join('|', FuzzTargets.Names)}> [--replay PATH...]");
    return 2;
}
if (args.Length > 1 && args[1] == "--replay")
{
    return Replay.Run(target, args.AsSpan(2));
}
SharpFuzz.Fuzzer.Run(stream =>
{
    using var copy = new MemoryStream();
    stream.CopyTo(copy);
    target(copy.GetBuffer().AsSpan(0, (int)copy.Length));
});
return 0;
