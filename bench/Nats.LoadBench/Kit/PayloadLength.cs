using System.Buffers;
using NATS.Client.Core;

namespace Nats.LoadBench.Kit;

/// <summary>
/// Deserializes a message to its payload length: a NATS.Net subscriber that checks each delivery's
/// size without allocating a copy of it, so the client's own cost stays as low as NATS.Net allows.
/// </summary>
internal sealed class PayloadLength : INatsDeserialize<int>
{
    public static readonly PayloadLength Instance = new();

    public int Deserialize(in ReadOnlySequence<byte> buffer) => (int)buffer.Length;
}
