using System.Text;
using Nats.Server.Protocol;

namespace Nats.Server.Tests.Protocol;

/// <summary>
/// Feeds bytes to the parser the way the read loop does: append what arrived, parse every complete
/// command, keep the unconsumed tail. Records a readable line per command or error.
/// </summary>
internal sealed class ParserDriver
{
    private readonly List<byte> _pending = [];
    private readonly ParserLimits _limits;

    public ParserDriver(ParserLimits limits)
    {
        _limits = limits;
    }

    public List<string> Events { get; } = [];

    public bool Failed { get; private set; }

    public void Feed(ReadOnlySpan<byte> chunk)
    {
        if (Failed)
        {
            return;
        }
        _pending.AddRange(chunk.ToArray());
        var buffer = _pending.ToArray();
        var offset = 0;
        while (offset < buffer.Length)
        {
            var slice = buffer.AsSpan(offset);
            var status = ClientProtocolParser.TryParse(slice, _limits, out var command, out var consumed, out _, out var error);
            if (status == ParseStatus.NeedMoreData)
            {
                break;
            }
            if (status == ParseStatus.Error)
            {
                Events.Add($"ERROR {error}");
                Failed = true;
                return;
            }
            Events.Add(Describe(slice, command));
            offset += consumed;
        }
        _pending.RemoveRange(0, offset);
    }

    public static string Describe(ReadOnlySpan<byte> buffer, in ClientCommand command)
    {
        var bytes = buffer.ToArray();
        string Text(Range r) => Encoding.UTF8.GetString(bytes.AsSpan()[r]);
        return command.Kind switch
        {
            CommandKind.Pub or CommandKind.HPub =>
                $"{command.Kind} subject={Text(command.Subject)} reply={(command.HasReply ? Text(command.Reply) : "-")} hdr={command.HeaderSize} " +
                $"payload={Encoding.UTF8.GetString(bytes, command.PayloadStart, command.PayloadSize)}",
            CommandKind.Sub => $"Sub subject={Text(command.Subject)} queue={(command.HasQueue ? Text(command.Queue) : "-")} sid={Text(command.Sid)}",
            CommandKind.Unsub => $"Unsub sid={Text(command.Sid)} max={command.UnsubMax}",
            CommandKind.Connect or CommandKind.Info or CommandKind.Err => $"{command.Kind} {Text(command.Argument)}",
            _ => command.Kind.ToString(),
        };
    }
}
