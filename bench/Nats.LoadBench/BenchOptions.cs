using Nats.LoadBench.Servers;

namespace Nats.LoadBench;

/// <summary>Command line of the harness; defaults are the documented full run.</summary>
internal sealed class BenchOptions
{
    public const string DefaultGo = "/usr/sbin/nats-server";
    public const string DefaultOurs = "dotnet src/Nats.Server.App/bin/Release/net10.0/nats-net-server.dll";

    public bool Smoke { get; private set; }

    public bool List { get; private set; }

    /// <summary>Run only the failure-detection check (a stuck subscriber must come out FAILED on both servers).</summary>
    public bool SelfCheck { get; private set; }

    public List<string> Rows { get; } = [];

    public int Rounds { get; private set; } = 5;

    public TimeSpan Duration { get; private set; } = TimeSpan.FromSeconds(1.5);

    public TimeSpan Warmup { get; private set; } = TimeSpan.FromSeconds(0.5);

    public ServerSpec Go { get; private set; } = ServerSpec.Parse("go", DefaultGo, isOurs: false);

    public ServerSpec Ours { get; private set; } = ServerSpec.Parse("ours", DefaultOurs, isOurs: true);

    public string? MarkdownPath { get; private set; }

    public string? JsonPath { get; private set; }

    public string Command { get; private set; } = "";

    /// <summary>Filled in after the run; reported next to the figures.</summary>
    public string LoadAverages { get; set; } = "";

    public static BenchOptions Parse(string[] args)
    {
        var o = new BenchOptions { Command = Environment.GetEnvironmentVariable("LOADBENCH_COMMAND") ?? "nats-loadbench " + string.Join(' ', args) };
        bool roundsGiven = false;
        for (int i = 0; i < args.Length; i++)
        {
            string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{args[i]} needs a value");
            switch (args[i])
            {
                case "--smoke": o.Smoke = true; break;
                case "--list": o.List = true; break;
                case "--self-check": o.SelfCheck = true; break;
                case "--row": o.Rows.AddRange(Next().Split(',', StringSplitOptions.RemoveEmptyEntries)); break;
                case "--rounds": o.Rounds = int.Parse(Next()); roundsGiven = true; break;
                case "--duration": o.Duration = TimeSpan.FromSeconds(double.Parse(Next(), System.Globalization.CultureInfo.InvariantCulture)); break;
                case "--warmup": o.Warmup = TimeSpan.FromSeconds(double.Parse(Next(), System.Globalization.CultureInfo.InvariantCulture)); break;
                case "--go-cmd": o.Go = ServerSpec.Parse("go", Next(), isOurs: false); break;
                case "--ours-cmd": o.Ours = ServerSpec.Parse("ours", Next(), isOurs: true); break;
                case "--md": o.MarkdownPath = Next(); break;
                case "--json": o.JsonPath = Next(); break;
                case "-h" or "--help": throw new ArgumentException("help");
                default: throw new ArgumentException($"unknown argument {args[i]}");
            }
        }

        // The check publishes a fixed count, like the smoke mode.
        o.Smoke |= o.SelfCheck;
        if (o.Smoke && !roundsGiven)
        {
            o.Rounds = 1;
        }

        return o;
    }

    public const string Usage = """
        usage: nats-loadbench [--smoke] [--row NAME[,NAME...]] [--rounds N] [--duration SEC] [--warmup SEC]
                              [--go-cmd "CMD"] [--ours-cmd "CMD"] [--md BENCHMARKS.md] [--json FILE] [--list]
          --smoke     every selected row once with a fixed message count; exit 1 on wrong counts
          --row       run only these rows (see --list)
          --self-check  prove the failure detection: a subscriber that never reads must be cut and reported FAILED
          --ours-cmd  command that starts our server, before "-a 127.0.0.1 -p PORT [-c CONF]"
        """;
}
