using Nats.Fuzz.Targets;

namespace Nats.Fuzz;

/// <summary>
/// One parser's harness: returns normally for any input the parser accepts or refuses the documented way, throws
/// anything else (an unexpected exception or a broken <see cref="OracleException"/> invariant), which afl records
/// as a crash.
/// </summary>
internal delegate void FuzzTarget(ReadOnlySpan<byte> input);

internal static class FuzzTargets
{
    private static readonly Dictionary<string, FuzzTarget> Targets = new(StringComparer.Ordinal)
    {
        ["protocol"] = ProtocolTarget.Run,
        ["config"] = ConfigTarget.Run,
        ["websocket"] = WebSocketTarget.Run,
        ["mqtt"] = MqttTarget.Run,
        ["jsapi"] = JetStreamApiTarget.Run,
    };

    public static IEnumerable<string> Names => Targets.Keys;

    public static bool TryGet(string name, out FuzzTarget target) => Targets.TryGetValue(name, out target!);
}

/// <summary>A parser returned something its contract rules out (out-of-range ranges, no progress, different results for split input).</summary>
internal sealed class OracleException(string message) : Exception(message);
