using Nats.Server.Protocol;

namespace Nats.Fuzz.Targets;

/// <summary>
/// The client protocol parser as the read loop drives it. Byte 0 picks the limits and byte 1 a split point; the rest is
/// what the client sent. Oracle: no exception (errors are <see cref="ParseStatus.Error"/>), every range inside the
/// command, progress on every complete command, and the same commands and outcome whether the bytes arrive at once or
/// in two reads (the parser keeps no state, so a split must not change anything).
/// </summary>
internal static class ProtocolTarget
{
    private static readonly int[] ControlLines = [4096, 64, 1024, 16];
    private static readonly int[] Payloads = [1024 * 1024, 16, 1024, 0];

    public static void Run(ReadOnlySpan<byte> input)
    {
        if (input.Length < 2)
        {
            return;
        }
        var limits = new ParserLimits(
            MaxControlLine: ControlLines[input[0] & 3],
            MaxPayload: Payloads[(input[0] >> 2) & 3],
            HeadersEnabled: (input[0] & 0x10) == 0,
            AwaitingAuth: (input[0] & 0x20) != 0);
        var data = input[2..];
        var whole = Drive(data, data.Length, limits);
        var split = input[1] % (data.Length + 1);
        var twoReads = Drive(data, split, limits);
        if (!whole.SequenceEqual(twoReads))
        {
            throw new OracleException($"split at {split} changed the result:\n  whole: {string.Join(" | ", whole)}\n  split: {string.Join(" | ", twoReads)}");
        }
    }

    /// <summary>Parses what the first <paramref name="firstRead"/> bytes hold, then the rest, as ReadLoop keeps an unconsumed tail.</summary>
    private static List<string> Drive(ReadOnlySpan<byte> data, int firstRead, in ParserLimits limits)
    {
        var events = new List<string>();
        var offset = 0;
        foreach (var available in (ReadOnlySpan<int>)[firstRead, data.Length])
        {
            while (offset < available)
            {
                var slice = data[offset..available];
                var status = ClientProtocolParser.TryParse(slice, limits, out var command, out var consumed, out var needed, out var error);
                if (status == ParseStatus.Error)
                {
                    events.Add($"error {error}");
                    return events;
                }
                if (status == ParseStatus.NeedMoreData)
                {
                    if (needed != 0 && needed <= slice.Length)
                    {
                        throw new OracleException($"NeedMoreData with needed={needed} but {slice.Length} bytes available");
                    }
                    break;
                }
                Check(command, consumed, slice.Length);
                events.Add($"{command.Kind} {consumed} s={command.Subject} r={command.Reply} q={command.Queue} sid={command.Sid} p={command.PayloadStart}+{command.PayloadSize} h={command.HeaderSize}");
                offset += consumed;
            }
        }
        return events;
    }

    private static void Check(in ClientCommand command, int consumed, int length)
    {
        if (consumed <= 0 || consumed > length)
        {
            throw new OracleException($"{command.Kind}: consumed {consumed} of {length}");
        }
        foreach (var range in (ReadOnlySpan<Range>)[command.Subject, command.Reply, command.Queue, command.Sid, command.Argument, command.SizeToken, command.HeaderSizeToken, command.ControlArgs])
        {
            if (range.Start.IsFromEnd || range.End.IsFromEnd || range.Start.Value > range.End.Value || range.End.Value > consumed)
            {
                throw new OracleException($"{command.Kind}: range {range} outside the {consumed}-byte command");
            }
        }
        if (command.Kind is CommandKind.Pub or CommandKind.HPub
            && (command.PayloadStart < 0 || command.PayloadSize < 0 || command.PayloadStart + command.PayloadSize > consumed || command.HeaderSize > command.PayloadSize))
        {
            throw new OracleException($"{command.Kind}: payload {command.PayloadStart}+{command.PayloadSize} (headers {command.HeaderSize}) outside the {consumed}-byte command");
        }
    }
}
