using System.Text;
using BenchmarkDotNet.Attributes;
using Nats.Server.Protocol;

namespace Nats.Benchmarks.Protocol;

/// <summary>The client command parser on the shapes the seed report measured (ops = commands parsed).</summary>
[MemoryDiagnoser]
public class ParserBenchmarks
{
    private static readonly ParserLimits Limits = new(4096, 1024 * 1024, HeadersEnabled: true, AwaitingAuth: false);
    private byte[] _ping = [];
    private byte[] _pub = [];
    private byte[] _hpub = [];
    private byte[] _splitFirst = [];
    private byte[] _splitWhole = [];

    [GlobalSetup]
    public void Setup()
    {
        var payload = new string('x', 128);
        _ping = "PING\r\n"u8.ToArray();
        _pub = Encoding.ASCII.GetBytes($"PUB bench.subject.one _INBOX.reply 128\r\n{payload}\r\n");
        _hpub = Encoding.ASCII.GetBytes($"HPUB bench.subject.one _INBOX.reply 22 150\r\nNATS/1.0\r\nK: Value\r\n\r\n{payload}\r\n");
        _splitWhole = _pub;
        _splitFirst = _pub.AsSpan(0, _pub.Length - 70).ToArray();
    }

    [Benchmark]
    public int Ping() => Parse(_ping);

    [Benchmark]
    public int Pub() => Parse(_pub);

    [Benchmark]
    public int HPub() => Parse(_hpub);

    /// <summary>A PUB whose payload arrives in two reads: one incomplete parse, then the full one.</summary>
    [Benchmark]
    public int PubSplitPayload()
    {
        ClientProtocolParser.TryParse(_splitFirst, Limits, out _, out _, out var needed, out _);
        return needed + Parse(_splitWhole);
    }

    private static int Parse(byte[] bytes)
    {
        ClientProtocolParser.TryParse(bytes, Limits, out var command, out var consumed, out _, out _);
        return consumed + command.PayloadSize;
    }
}
