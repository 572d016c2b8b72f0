using Nats.LoadBench;
using Nats.LoadBench.Reporting;
using Nats.LoadBench.Running;
using Nats.LoadBench.Scenarios;

BenchOptions options;
try
{
    options = BenchOptions.Parse(args);
}
catch (Exception ex) when (ex is ArgumentException or FormatException)
{
    Console.Error.WriteLine(ex.Message == "help" ? BenchOptions.Usage : ex.Message + "\n" + BenchOptions.Usage);
    return 2;
}

if (options.List)
{
    foreach (var s in Catalog.All)
    {
        Console.WriteLine($"{s.Name,-26} {s.Section} / {s.Title} / {s.PayloadSize} B");
    }

    return 0;
}

if (options.SelfCheck)
{
    bool detected = await new Runner(options, Console.Out).SelfCheckAsync();
    Console.WriteLine(detected ? "self-check: cuts are detected and reported as failures" : "self-check FAILED: a cut went unreported");
    return detected ? 0 : 1;
}

var scenarios = new List<Scenario>();
foreach (var name in options.Rows)
{
    var sc = Catalog.Find(name);
    if (sc == null)
    {
        Console.Error.WriteLine($"unknown row '{name}'; --list shows the names");
        return 2;
    }

    scenarios.Add(sc);
}

if (scenarios.Count == 0)
{
    scenarios.AddRange(Catalog.All);
}

var when = DateTimeOffset.UtcNow;
var machine = MachineInfo.Collect(options.Go.ToString(), options.Ours.ToString());
Console.WriteLine($"loadbench {(options.Smoke ? "smoke" : "full")} run: {scenarios.Count} rows x {options.Rounds} rounds; go = {options.Go}; ours = {options.Ours}");
Console.WriteLine($"machine: {machine.Cpu}, {machine.Cores} cores, {machine.Memory}, {machine.Os}, {machine.Dotnet}, {machine.GoServer}");

var loadBefore = MachineInfo.LoadAverage();
var rows = await new Runner(options, Console.Out).RunAsync(scenarios);
var loadAfter = MachineInfo.LoadAverage();
options.LoadAverages = $"{loadBefore} at start, {loadAfter} at end";
Console.WriteLine($"load average (1/5/15 min): {options.LoadAverages}");
var tables = MarkdownTables.Render(rows);
Console.WriteLine();
Console.WriteLine(tables);

if (options.JsonPath != null)
{
    JsonReport.Write(options.JsonPath, rows, machine, options, when);
    Console.WriteLine($"raw figures written to {options.JsonPath}");
}

if (options.MarkdownPath != null)
{
    BenchmarksFile.WriteRegion(options.MarkdownPath, BenchmarksFile.Body(tables, machine, options, when, options.JsonPath));
    Console.WriteLine($"table written to {options.MarkdownPath}");
}

// Wrong counts or a broken Go run fail the process; a feature ours lacks does not.
var failed = rows.Where(r => r.Go.Outcome == Outcome.Failed || r.Ours?.Outcome == Outcome.Failed).ToList();
var notImplemented = rows.Where(r => r.Ours?.Outcome == Outcome.NotImplemented).Select(r => r.Scenario.Name).ToList();
if (notImplemented.Count > 0)
{
    Console.WriteLine($"ours not implemented: {string.Join(", ", notImplemented)}");
}

// A full smoke run (CI) also proves that a cut is caught: otherwise "all counts verified" could
// come from a harness that cannot see failures.
bool selfCheckOk = !options.Smoke || options.Rows.Count > 0 || await new Runner(options, Console.Out).SelfCheckAsync();
if (!selfCheckOk)
{
    Console.WriteLine("self-check FAILED: a stuck subscriber's cut went unreported");
}

if (failed.Count > 0 || !selfCheckOk)
{
    foreach (var r in failed)
    {
        Console.WriteLine($"FAILED {r.Scenario.Name}: go: {r.Go.Reason ?? "ok"}; ours: {r.Ours?.Reason ?? "ok"}");
    }

    return 1;
}

Console.WriteLine(options.Smoke ? "smoke: all counts verified" + (options.Rows.Count == 0 ? ", cuts detected" : "") : "done");
return 0;
