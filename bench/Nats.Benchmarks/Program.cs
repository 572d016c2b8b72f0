using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

using Nats.Benchmarks.Probes;

if (args.Length > 0 && args[0] == "alloc-probe")
{
    // "alloc-probe N [mapped] [payload=BYTES]": "mapped" publishes on x.probe, which a {{wildcard(1)}}
    // mapping delivers as probe; payload sets the message size (16 B by default).
    var payloadArg = args.Skip(2).FirstOrDefault(a => a.StartsWith("payload=", StringComparison.Ordinal));
    return await AllocationProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 1_000_000, args.Skip(2).Contains("mapped"),
        payloadArg is null ? 16 : int.Parse(payloadArg["payload=".Length..]));
}

if (args.Length > 0 && args[0] == "alloc-probe-js")
{
    // "alloc-probe-js N [file|memory] [gosync]": the JetStream publish path with PubAcks (100 in flight).
    return await JetStreamAllocationProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 200_000,
        args.Length > 2 ? args[2] : "file", args.Length > 3 && args[3] == "gosync");
}

if (args.Length > 0 && args[0] == "alloc-probe-consumer")
{
    // "alloc-probe-consumer N": JetStream pull fetch + explicit ack, and push ack none, from a memory stream of N messages.
    return await ConsumerAllocationProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 200_000);
}

if (args.Length > 0 && args[0] == "startup-probe")
{
    // "startup-probe N [monitoring]": embedded server start-to-ready over N start/stop cycles.
    return await StartupProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 50, args.Length > 2 && args[2] == "monitoring");
}

if (args.Length > 0 && args[0] == "inprocess-probe")
{
    // "inprocess-probe [messages] [requests]": NATS.Net 1:1 pub/sub and request/reply, loopback TCP vs in-process pipes.
    return await InProcessProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 1_000_000, args.Length > 2 ? int.Parse(args[2]) : 20_000);
}

if (args.Length > 0 && args[0] == "alloc-probe-reqrep")
{
    // "alloc-probe-reqrep N [unique]": 10 requesters, 2 services in a queue group, one request in flight each;
    // "unique" gives every request its own reply subject, as NATS.Net does.
    return await RequestReplyAllocationProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 200_000, args.Skip(2).Contains("unique"));
}

if (args.Length > 0 && args[0] == "alloc-probe-imports")
{
    return await ImportAllocationProbe.RunAsync(args.Length > 1 ? int.Parse(args[1]) : 1_000_000);
}

if (args.Length > 0 && args[0] == "store-crash-probe")
{
    return StoreCrashProbe.Run(args.Length > 1 ? int.Parse(args[1]) : 2_000_000, args.Length > 2 ? int.Parse(args[2]) : 128);
}

if (args.Length > 0 && args[0] == "store-scale-probe")
{
    return StoreScaleProbe.Run(args.Length > 1 ? int.Parse(args[1]) : 10_000_000, args.Length > 2 ? int.Parse(args[2]) : 16);
}

if (args.Length > 0 && args[0] == "durable-append-probe")
{
    return await DurableAppendProbe.RunAsync(args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : 5);
}

// In-process toolchain: no child project build per benchmark, which keeps a full pass short on a
// 2-core machine. Ops/s and allocated bytes per op are the two figures every row reports.
var config = DefaultConfig.Instance
    .AddJob(Job.ShortRun.WithToolchain(InProcessEmitToolchain.Instance))
    .AddDiagnoser(MemoryDiagnoser.Default)
    .AddColumn(StatisticColumn.OperationsPerSecond)
    .WithOptions(ConfigOptions.DisableOptimizationsValidator);

BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, config);
return 0;
