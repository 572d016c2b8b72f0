namespace Nats.Storage;

/// <summary>A damaged record found by the store: where (file engine block id, 0 when not applicable),
/// which sequences (0 when the damaged bytes' sequence could not be read), how many bytes, and the
/// logged description.</summary>
internal sealed record StoreDamage(int Block, ulong FirstSeq, ulong LastSeq, ulong Bytes, string Description);
